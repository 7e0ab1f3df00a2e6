import BluetoothCore
import BluetoothHost
import BluetoothPeripheral
import GATTProfiles

/// Answers a read of a simulated characteristic: `.value(bytes)` (the whole value; the
/// server cuts it at the client's offset) or `.error(code)`.
public typealias SimulatedReadHandler = @Sendable (SimulatedRead) async -> GATTReadResponse

/// Answers a write of a simulated characteristic: `.success` (the value is then stored) or
/// `.error(code)`.
public typealias SimulatedWriteHandler = @Sendable (SimulatedWrite) async -> GATTWriteResponse

/// A characteristic of a ``SimulatedService``, a builder over the
/// `GATTCharacteristicDefinition` its device publishes: its value, and optionally how it
/// answers reads and writes and how long it takes.
///
/// Without handlers a read returns the stored value and a permitted write replaces it, as a
/// plain GATT server does.
///
/// ```swift
/// SimulatedCharacteristic(uuid: "2A38", properties: [.read, .write], value: [0x01], maximumValueLength: 1,
///                         onWrite: { write in write.value.first.map { $0 <= 6 } == true ? .success : .error(.outOfRange) })
/// ```
public struct SimulatedCharacteristic: Sendable {
    /// What the device's GATT server publishes. Its `permissions` are the resolved ones (see
    /// ``permissions``); its `onRead` and `onWrite` are replaced by the simulator's.
    public var definition: GATTCharacteristicDefinition
    /// Who may read and write; `nil` derives it from ``properties``.
    public var permissions: AttributePermissions? {
        didSet { resolvePermissions() }
    }
    /// What a central's link needs before it may read the value: encryption, authentication
    /// (MITM), authorization, a 128-bit key. The device's GATT server refuses it otherwise, with
    /// the error that tells the central to pair (Core 6.0, Vol 3, Part C, 10.3.1), so an app's
    /// tests can run pairing against the simulator.
    public var readSecurity: PeripheralSecurity {
        didSet { resolvePermissions() }
    }
    /// What a central's link needs before it may write the value.
    public var writeSecurity: PeripheralSecurity {
        didSet { resolvePermissions() }
    }
    /// Waits this long before answering each read or write (change it later with
    /// ``SimulatedDevice/setResponseDelay(_:for:)``).
    public var responseDelay: Duration
    /// Answers reads instead of the stored value.
    public var onRead: SimulatedReadHandler?
    /// Decides on writes instead of accepting every one.
    public var onWrite: SimulatedWriteHandler?

    /// A characteristic with a value and, optionally, the security its reads and writes need,
    /// handlers and a response delay.
    /// - Parameters:
    ///   - uuid: the characteristic's type.
    ///   - properties: what centrals may do with it (read, write, notify, …).
    ///   - permissions: `nil` derives them from `properties`.
    ///   - value: the value until a central or the test changes it.
    ///   - maximumValueLength: the longest value a write may set (at most 512).
    ///   - userDescription: text for a User Description descriptor, if any.
    ///   - security: what reads and writes both need (see ``readSecurity``), added to
    ///     `readSecurity` and `writeSecurity`.
    ///   - readSecurity: what a central's link needs before it may read the value.
    ///   - writeSecurity: what a central's link needs before it may write the value.
    ///   - responseDelay: how long the peripheral takes to answer each request.
    ///   - onRead: answers reads instead of the stored value.
    ///   - onWrite: decides on writes instead of accepting every one.
    public init(uuid: BluetoothUUID, properties: CharacteristicProperties, permissions: AttributePermissions? = nil, value: [UInt8] = [],
                maximumValueLength: Int = GATTCharacteristicDefinition.maximumAttributeValueLength, userDescription: String? = nil,
                security: PeripheralSecurity = [], readSecurity: PeripheralSecurity = [], writeSecurity: PeripheralSecurity = [],
                responseDelay: Duration = .zero, onRead: SimulatedReadHandler? = nil, onWrite: SimulatedWriteHandler? = nil) {
        definition = GATTCharacteristicDefinition(uuid: uuid, properties: properties, permissions: permissions, value: value,
                                                  maximumValueLength: maximumValueLength, userDescription: userDescription)
        self.permissions = permissions
        self.readSecurity = readSecurity.union(security)
        self.writeSecurity = writeSecurity.union(security)
        self.responseDelay = responseDelay
        self.onRead = onRead
        self.onWrite = onWrite
        resolvePermissions()
    }

    /// A characteristic as a GATTProfiles profile declares it (UUID, properties, initial
    /// value), e.g. `SimulatedCharacteristic(BatteryProfile.Level.self, value: [87])`.
    /// - Parameters:
    ///   - maximumValueLength: the longest value a write may set (at most 512).
    ///   - responseDelay: how long the peripheral takes to answer each request.
    ///   - onWrite: decides on writes instead of accepting every one.
    ///   - onRead: answers reads instead of the stored value.
    ///   - profile: the profile's characteristic type.
    ///   - value: replaces the profile's initial value.
    ///   - properties: replaces the profile's properties.
    ///   - security: what a central's link needs before it may read or write the value.
    public init<C: CharacteristicConfigurable>(_ profile: C.Type, value: [UInt8]? = nil, properties: CharacteristicProperties? = nil,
                                               maximumValueLength: Int = GATTCharacteristicDefinition.maximumAttributeValueLength,
                                               security: PeripheralSecurity = [], responseDelay: Duration = .zero,
                                               onRead: SimulatedReadHandler? = nil, onWrite: SimulatedWriteHandler? = nil) {
        let declared = properties ?? profile.properties
        self.init(uuid: profile.uuid, properties: declared,
                  permissions: properties == nil ? profile.permissions : nil,
                  value: value ?? profile.initialValue ?? [], maximumValueLength: maximumValueLength, security: security,
                  responseDelay: responseDelay, onRead: onRead, onWrite: onWrite)
    }

    /// Whether centrals may read it.
    var isReadable: Bool { definition.isReadable }

    /// Whether centrals may write it.
    var isWritable: Bool { definition.isWritable }

    /// ``permissions``, or those ``properties`` imply when it is `nil`.
    var resolvedPermissions: AttributePermissions { definition.permissions }

    /// Sets the definition's permissions to ``permissions``, or derives them from the
    /// properties, plus what ``readSecurity`` asks of reads when it is readable and
    /// ``writeSecurity`` of writes when it is writable (a 128-bit key when either asks for one).
    mutating func resolvePermissions() {
        var resolved = permissions ?? AttributePermissions(properties: definition.properties)
        if resolved.contains(.readable) { resolved.formUnion(readSecurity.permissions(write: false)) }
        if resolved.contains(.writeable) { resolved.formUnion(writeSecurity.permissions(write: true)) }
        definition.permissions = resolved
        let needsFullKey = readSecurity.contains(.key128) || writeSecurity.contains(.key128)
        definition.minimumKeySize = needsFullKey ? GATTCharacteristicDefinition.encryptionKeySizes.upperBound
            : GATTCharacteristicDefinition.encryptionKeySizes.lowerBound
    }
}
