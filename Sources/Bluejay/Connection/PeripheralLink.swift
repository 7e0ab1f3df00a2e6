import BluetoothCore
import BluetoothHost
import Foundation
import Synchronization

/// One connection, seen through Bluejay's identifiers: finds services, characteristics and
/// descriptors by UUID (discovering them on first use and caching them until the peer's
/// database changes) and runs the GATT procedures, reporting ``BluejayError``s.
///
/// Operations on one link are serialized by the FIFO queue that owns it; a lock protects
/// the caches. Not an actor: a read runs in its caller's task, so it costs no extra hop.
final class PeripheralLink: Sendable {
    let connection: any CentralConnection
    /// Who the peripheral is: its identity once known (see ``learn(identity:)``).
    var identifier: PeripheralIdentifier { currentIdentifier.withLock { $0 } }
    private let currentIdentifier: Mutex<PeripheralIdentifier>

    private struct Caches {
        var services: [ServiceIdentifier: GATTService] = [:]
        var characteristics: [ServiceIdentifier: [GATTCharacteristic]] = [:]
        var descriptors: [CharacteristicIdentifier: [GATTDescriptor]] = [:]
    }

    private let caches = Mutex(Caches())

    /// Raise the link's security and retry once after a security refusal.
    let raisesSecurity: Bool

    init(connection: any CentralConnection, identifier: PeripheralIdentifier, raisesSecurity: Bool = true) {
        self.connection = connection
        currentIdentifier = Mutex(identifier)
        self.raisesSecurity = raisesSecurity
    }

    /// A pairing revealed the peripheral's identity: the link is known by it from now on.
    /// Returns the identifier it had, or `nil` when it already was the identity.
    func learn(identity: DeviceAddress) -> PeripheralIdentifier? {
        currentIdentifier.withLock { current in
            let known = PeripheralIdentifier(address: identity, name: current.name)
            guard known != current else { return nil }
            defer { current = known }
            return current
        }
    }

    /// The ATT MTU negotiated with the peripheral (the bearer's).
    var mtu: Int { Int(connection.attMTU) }

    /// Our host's connection, when the link runs on it.
    var hostConnection: Connection? { connection as? Connection }

    /// The longest value one write of `type` carries: MTU - 3 without response, MTU - 15
    /// signed; 512 with response (a long write, Core 6.0, Vol 3, Part F, 3.2.9).
    func maximumWriteValueLength(for type: WriteType) -> Int {
        switch type {
        case .withResponse: return GATTClient.maximumAttributeValueLength
        case .withoutResponse: return mtu - 3
        case .signed: return mtu - 3 - ATTSignedWriteCommand.signatureLength
        }
    }

    // MARK: Finding things

    func service(_ id: ServiceIdentifier) async throws -> GATTService {
        if let service = caches.withLock({ $0.services[id] }) { return service }
        let uuid = try id.requireUUID()
        let found = try await mapErrors("discovering service \(id)") {
            try await connection.discoverPrimaryServices(uuid: uuid)
        }
        guard let service = found.first else { throw BluejayError.missingService(id) }
        caches.withLock { $0.services[id] = service }
        return service
    }

    func characteristic(_ id: CharacteristicIdentifier) async throws -> GATTCharacteristic {
        let uuid = try id.requireUUID()
        if let known = caches.withLock({ $0.characteristics[id.service]?.first { $0.uuid == uuid } }) { return known }
        let container = try await service(id.service)
        let found = try await mapErrors("discovering the characteristics of \(id.service)") {
            try await connection.discoverCharacteristics(of: container)
        }
        caches.withLock { $0.characteristics[id.service] = found }
        guard let characteristic = found.first(where: { $0.uuid == uuid }) else { throw BluejayError.missingCharacteristic(id) }
        return characteristic
    }

    func descriptor(_ id: DescriptorIdentifier) async throws -> GATTDescriptor {
        let uuid = try id.requireUUID()
        if let known = caches.withLock({ $0.descriptors[id.characteristic]?.first { $0.uuid == uuid } }) { return known }
        let owner = try await characteristic(id.characteristic)
        let found = try await mapErrors("discovering the descriptors of \(id.characteristic)") {
            try await connection.discoverDescriptors(of: owner)
        }
        caches.withLock { $0.descriptors[id.characteristic] = found }
        guard let descriptor = found.first(where: { $0.uuid == uuid }) else { throw BluejayError.missingDescriptor(id) }
        return descriptor
    }

    // MARK: Procedures

    /// Reads a characteristic's value, however long.
    func read(_ id: CharacteristicIdentifier) async throws -> Data {
        try await resyncing { try await readOnce(id) }
    }

    private func readOnce(_ id: CharacteristicIdentifier) async throws -> Data {
        let found = try await characteristic(id)
        return Data(try await mapErrors("reading \(id)") { try await connection.read(found) })
    }

    /// Starts ``read(_:)-(CharacteristicIdentifier)`` without a task when it can (the callback
    /// API): the characteristic is known and the backend starts reads that way
    /// (``CentralConnection/startRead(handle:raisingSecurity:within:completion:)``). `completion`
    /// then gets the whole value on the thread its response came on, or what is left to run in
    /// a task: the rest of a long value, a security raise, a resynchronisation after Database
    /// Out Of Sync, or the error to report, as ``read(_:)-(CharacteristicIdentifier)`` would
    /// throw it. Returns `false`, without calling `completion`, when it cannot start so.
    func startRead(_ id: CharacteristicIdentifier, within scope: RequestScope,
                   completion: @escaping @Sendable (StartedProcedure<Data>) -> Void) -> Bool {
        guard let found = known(id) else { return false }
        let goOn = continuing({ "reading \(id)" }, again: { [self] in try await readOnce(id) }, completion)
        return connection.startRead(handle: found.valueHandle, raisingSecurity: raisesSecurity, within: scope) { goOn($0.map { Data($0) }) }
    }

    /// ``startRead(_:within:completion:)-(CharacteristicIdentifier,_,_)`` for a descriptor.
    func startRead(_ id: DescriptorIdentifier, within scope: RequestScope,
                   completion: @escaping @Sendable (StartedProcedure<Data>) -> Void) -> Bool {
        guard let found = known(id) else { return false }
        let goOn = continuing({ "reading \(id)" }, again: { [self] in try await readOnce(id) }, completion)
        return connection.startRead(handle: found.handle, raisingSecurity: raisesSecurity, within: scope) { goOn($0.map { Data($0) }) }
    }

    /// Starts ``write(_:to:type:)`` with response without a task when it can, as
    /// ``startRead(_:within:completion:)-(CharacteristicIdentifier,_,_)`` starts a read: the
    /// characteristic is known, the value fits in one Write Request (and in the 512 bytes a
    /// write may carry), and the backend starts writes that way. Returns `false`, without
    /// calling `completion`, otherwise.
    func startWrite(_ value: Data, to id: CharacteristicIdentifier, type: WriteType, within scope: RequestScope,
                    completion: @escaping @Sendable (StartedProcedure<Void>) -> Void) -> Bool {
        guard type == .withResponse, value.count <= GATTClient.maximumAttributeValueLength, let found = known(id) else { return false }
        let goOn = continuing({ "writing \(id)" }, again: { [self] in try await writeOnce(value, to: id, type: type) }, completion)
        return connection.startWrite(Array(value), handle: found.valueHandle, raisingSecurity: raisesSecurity, within: scope, completion: goOn)
    }

    /// ``startWrite(_:to:type:within:completion:)`` for a descriptor.
    func startWrite(_ value: Data, to id: DescriptorIdentifier, within scope: RequestScope,
                    completion: @escaping @Sendable (StartedProcedure<Void>) -> Void) -> Bool {
        guard value.count <= GATTClient.maximumAttributeValueLength, let found = known(id) else { return false }
        let goOn = continuing({ "writing \(id)" }, again: { [self] in try await writeOnce(value, to: id) }, completion)
        return connection.startWrite(Array(value), handle: found.handle, raisingSecurity: raisesSecurity, within: scope, completion: goOn)
    }

    /// The characteristic, if already found.
    private func known(_ id: CharacteristicIdentifier) -> GATTCharacteristic? {
        guard let uuid = id.uuid else { return nil }
        return caches.withLock { $0.characteristics[id.service]?.first { $0.uuid == uuid } }
    }

    /// The descriptor, if already found.
    private func known(_ id: DescriptorIdentifier) -> GATTDescriptor? {
        guard let uuid = id.uuid else { return nil }
        return caches.withLock { $0.descriptors[id.characteristic]?.first { $0.uuid == uuid } }
    }

    /// The completion of a procedure begun without a task, whose rest goes on as the task-run
    /// procedure does: errors reported as ``BluejayError``s naming `operation`, and after
    /// Database Out Of Sync, `again` once the link has resynchronised.
    private func continuing<T: Sendable>(_ operation: @escaping @Sendable () -> String, again: @escaping @Sendable () async throws -> T,
                                         _ completion: @escaping @Sendable (StartedProcedure<T>) -> Void) -> @Sendable (StartedProcedure<T>) -> Void {
        { [self] started in
            guard case let .unfinished(rest) = started else { return completion(started) }
            completion(.unfinished { [self] in
                try await resyncing(first: { try await mapped(operation()) { try await rest() } }, then: again)
            })
        }
    }

    func write(_ value: Data, to id: CharacteristicIdentifier, type: WriteType) async throws {
        try await resyncing { try await writeOnce(value, to: id, type: type) }
    }

    private func writeOnce(_ value: Data, to id: CharacteristicIdentifier, type: WriteType) async throws {
        let target = try await characteristic(id)
        switch type {
        case .withResponse:
            guard value.count <= GATTClient.maximumAttributeValueLength else {
                throw BluejayError.valueTooLong(length: value.count, maximum: GATTClient.maximumAttributeValueLength)
            }
            try await mapErrors("writing \(id)") { try await connection.write(Array(value), to: target) }
        case .withoutResponse:
            guard target.properties.contains(.writeWithoutResponse) else {
                throw BluejayError.notSupported("\(id) does not accept writes without response (its properties: \(target.properties))")
            }
            let maximum = maximumWriteValueLength(for: .withoutResponse)
            guard value.count <= maximum else { throw BluejayError.valueTooLong(length: value.count, maximum: maximum) }
            try await mapErrors("writing \(id) without response") {
                try await connection.writeWithoutResponse(Array(value), to: target)
            }
        case .signed:
            guard target.properties.contains(.authenticatedSignedWrites) else {
                throw BluejayError.notSupported("\(id) does not accept signed writes (its properties: \(target.properties))")
            }
            let maximum = maximumWriteValueLength(for: .signed)
            guard value.count <= maximum else { throw BluejayError.valueTooLong(length: value.count, maximum: maximum) }
            try await mapErrors("writing \(id) signed") { try await connection.writeSigned(Array(value), to: target) }
        }
    }

    func read(_ id: DescriptorIdentifier) async throws -> Data {
        try await resyncing { try await readOnce(id) }
    }

    private func readOnce(_ id: DescriptorIdentifier) async throws -> Data {
        let found = try await descriptor(id)
        return Data(try await mapErrors("reading \(id)") { try await connection.read(found) })
    }

    func write(_ value: Data, to id: DescriptorIdentifier) async throws {
        try await resyncing { try await writeOnce(value, to: id) }
    }

    private func writeOnce(_ value: Data, to id: DescriptorIdentifier) async throws {
        let target = try await descriptor(id)
        guard value.count <= GATTClient.maximumAttributeValueLength else {
            throw BluejayError.valueTooLong(length: value.count, maximum: GATTClient.maximumAttributeValueLength)
        }
        try await mapErrors("writing \(id)") { try await connection.write(Array(value), to: target) }
    }

    /// Enables notifications (or indications); `handler` gets each transport batch's values
    /// on the transport's reader thread, until the subscription is cancelled; `ended` runs
    /// once when it ends (with the error when the link dropped).
    func subscribe(_ id: CharacteristicIdentifier, ended: @escaping @Sendable (HostError?) -> Void = { _ in },
                   handler: @escaping @Sendable ([GATTValue]) -> Void) async throws -> any CentralSubscription {
        try await resyncing {
            let (target, cccd) = try await notifying(id)
            return try await mapErrors("enabling notifications of \(id)") {
                try await connection.subscribeValues(to: target, clientConfigurationHandle: cccd, ended: ended, handler: handler)
            }
        }
    }

    /// The characteristic, which must notify or indicate, and its configuration descriptor if known.
    private func notifying(_ id: CharacteristicIdentifier) async throws -> (GATTCharacteristic, UInt16?) {
        let target = try await characteristic(id)
        guard !target.properties.isDisjoint(with: [.notify, .indicate]) else {
            throw BluejayError.notSupported("\(id) neither notifies nor indicates (its properties: \(target.properties))")
        }
        let cccd = caches.withLock { $0.descriptors[id]?.first { $0.uuid == GATTAttributeType.clientCharacteristicConfiguration }?.handle }
        return (target, cccd)
    }

    /// Turns notifications off. A characteristic that cannot be found has none on.
    func unsubscribe(_ id: CharacteristicIdentifier) async throws {
        guard let uuid = id.uuid, let target = caches.withLock({ $0.characteristics[id.service]?.first { $0.uuid == uuid } }) else { return }
        try await mapErrors("disabling notifications of \(id)") { try await connection.unsubscribe(from: target) }
    }

    func readRSSI() async throws -> Int {
        Int(try await mapErrors("reading the RSSI") { try await connection.readRSSI() })
    }

    /// The peer's database changed in `change.affectedHandles`: forgets what was found
    /// there. Returns the services that were in use there.
    func invalidate(_ change: GATTServiceChange) -> [ServiceIdentifier] {
        caches.withLock { caches in
            var invalidated = Set(change.invalidatedServices.map { ServiceIdentifier(uuid: $0.uuid) })
            for (id, service) in caches.services where service.handleRange.overlaps(change.affectedHandles) {
                invalidated.insert(id)
            }
            for id in invalidated {
                caches.services[id] = nil
                caches.characteristics[id] = nil
                caches.descriptors = caches.descriptors.filter { $0.key.service != id }
            }
            return invalidated.sorted { $0.description < $1.description }
        }
    }

    /// Runs an operation; when the peer answers Database Out Of Sync (its database changed and
    /// this client has not learnt it, Core 6.0, Vol 3, Part G, 2.5.2.1) forgets every handle
    /// found, reads the Database Hash again (which makes this client change-aware; a bonded or
    /// trusted peer's database is rediscovered and cached) and runs it once more, finding the
    /// handles anew. A second Database Out Of Sync is thrown as ``BluejayError/attError(code:operation:handle:)``.
    private func resyncing<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await resyncing(first: body, then: body)
    }

    /// ``resyncing(_:)`` whose first try is `first` and whose try after resynchronising is `then`.
    private func resyncing<T: Sendable>(first: () async throws -> T, then body: () async throws -> T) async throws -> T {
        do {
            return try await first()
        } catch BluejayError.attError(code: .databaseOutOfSync, _, _) {
            caches.withLock { $0 = Caches() }
            do {
                _ = try await connection.prepareDatabase()
            } catch {
                // The next request is answered anyway (the server counts this client change-aware
                // after its Database Out Of Sync): discovery by UUID finds the handles again.
            }
            return try await body()
        }
    }

    /// `operation` names the procedure in the error, and is made only when there is one (a
    /// read would otherwise pay for the string every time).
    private func mapErrors<T: Sendable>(_ operation: @autoclosure () -> String, _ body: () async throws -> T) async throws -> T {
        try await mapped(operation()) {
            try await raisesSecurity ? connection.raisingSecurity(body, willRaise: { _ in }) : body()
        }
    }

    /// ``mapErrors(_:_:)`` without the security raise.
    private func mapped<T: Sendable>(_ operation: @autoclosure () -> String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            throw BluejayError(error, peripheral: identifier, operation: operation())
        }
    }

    // MARK: Security

    func pair(authenticated: Bool = false) async throws -> LinkSecurity {
        do {
            return try await connection.pair(authenticated: authenticated)
        } catch {
            throw BluejayError(error, peripheral: identifier, operation: "pairing")
        }
    }

    func secure(authenticated: Bool) async throws -> LinkSecurity {
        do {
            return try await connection.secure(authenticated: authenticated)
        } catch {
            throw BluejayError(error, peripheral: identifier, operation: "securing the link")
        }
    }
}
