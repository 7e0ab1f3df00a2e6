import BluetoothCore

/// What the host learned about its controller while initializing it.
public struct ControllerInfo: Sendable, Equatable {
    /// Its public address (Read BD_ADDR); 00:00:00:00:00:00 when it has none.
    public var address: BluetoothAddress
    public var version: ReadLocalVersionInformationCommand.ReturnParameters
    public var supportedCommands: SupportedCommands
    /// The LMP feature bits (Read Local Supported Features).
    public var lmpFeatures: UInt64
    public var leFeatures: LEFeatures
    /// HC_LE_ACL_Data_Packet_Length: the largest ACL payload per packet.
    public var aclDataLength: Int
    /// HC_Total_Num_LE_ACL_Data_Packets: how many ACL packets the controller buffers.
    public var aclBufferCount: Int
    /// LE Read Buffer Size reported no LE buffers: the ACL buffers are those of Read Buffer
    /// Size, shared with BR/EDR (Core 6.0, Vol 4, Part E, 7.8.2).
    public var sharesACLBuffers = false
    /// The static random address the controller reported for itself when it has no public
    /// address (Zephyr's Read Static Addresses: an nRF5x's factory address); `nil` otherwise.
    public var staticAddress: BluetoothAddress?
    /// How many devices its filter accept list and its resolving list hold, when it can say.
    public var filterAcceptListSize: Int?
    public var resolvingListSize: Int?
    /// Commands it lists in Supported_Commands but answered Unknown HCI Command: the host
    /// treats them as unsupported from then on (``supports(_:listedAs:)`` is false for them).
    public var unknownCommands: Set<HCIOpcode> = []

    public init(address: BluetoothAddress, version: ReadLocalVersionInformationCommand.ReturnParameters,
                supportedCommands: SupportedCommands, lmpFeatures: UInt64, leFeatures: LEFeatures,
                aclDataLength: Int, aclBufferCount: Int) {
        self.address = address
        self.version = version
        self.supportedCommands = supportedCommands
        self.lmpFeatures = lmpFeatures
        self.leFeatures = leFeatures
        self.aclDataLength = aclDataLength
        self.aclBufferCount = aclBufferCount
    }

    /// Whether the controller lists the command in Supported_Commands.
    public func supports(_ command: SupportedCommands.Command) -> Bool {
        supportedCommands.contains(command)
    }

    /// Whether the host may send the command: the controller lists it (`bit`) and has not
    /// answered it Unknown HCI Command.
    public func supports<Command: HCICommand>(_ command: Command.Type, listedAs bit: SupportedCommands.Command) -> Bool {
        supports(bit) && !unknownCommands.contains(Command.opcode)
    }

    /// Whether Read BD_ADDR gave an address: a controller without one answers 00:00:00:00:00:00
    /// (Zephyr's `hci_uart` on an nRF52840, for one), and the host then uses a static random
    /// address as its identity.
    public var hasPublicAddress: Bool { address != .zero }

    /// Extended scanning needs both of its commands (Core 6.0, Vol 4, Part E, 7.8.64-65).
    public var supportsExtendedScanning: Bool {
        supports(.leSetExtendedScanParameters) && supports(.leSetExtendedScanEnable)
    }

    public var supportsExtendedCreateConnection: Bool { supports(.leExtendedCreateConnection) }

    /// Extended advertising: the LE feature (bit 12) and the commands that run advertising
    /// sets (Core 6.0, Vol 4, Part E, 7.8.53-7.8.56, 7.8.58).
    public var supportsExtendedAdvertising: Bool {
        leFeatures.contains(.extendedAdvertising) && supports(.leSetExtendedAdvertisingParameters)
            && supports(.leSetExtendedAdvertisingData) && supports(.leSetExtendedAdvertisingEnable)
    }

    /// The one command family the host uses for advertising, scanning and connecting on this
    /// controller, decided here once: a controller refuses the other family's commands once
    /// one was used (Core 6.0, Vol 4, Part E, 3.1.1). Extended when the controller has
    /// extended advertising, scanning and connecting; legacy otherwise (the legacy commands
    /// are there on every LE controller), legacy advertising then running on an advertising set
    /// with legacy PDUs.
    public var commandFamily: LECommandFamily {
        supportsExtendedAdvertising && supportsExtendedScanning && supportsExtendedCreateConnection ? .extended : .legacy
    }

    /// A list holding fewer entries than this is reported as small (``adaptations``).
    public static let smallListSize = 4

    /// What the controller lacks and the host does without, for logs and `bluejay adapters`.
    public var adaptations: [ControllerAdaptation] {
        var adaptations: [ControllerAdaptation] = []
        if !hasPublicAddress { adaptations.append(.noPublicAddress) }
        if sharesACLBuffers { adaptations.append(.sharedACLBuffers) }
        if !supports(LEReadBufferSizeV2Command.self, listedAs: .leReadBufferSizeV2) { adaptations.append(.noLEReadBufferSizeV2) }
        if commandFamily == .legacy { adaptations.append(.legacyCommandsOnly) }
        if !leFeatures.contains(.le2MPHY) { adaptations.append(.noLE2MPHY) }
        if !leFeatures.contains(.leCodedPHY) { adaptations.append(.noLECodedPHY) }
        if let size = filterAcceptListSize, size < Self.smallListSize { adaptations.append(.smallFilterAcceptList(size)) }
        if let size = resolvingListSize, size < Self.smallListSize { adaptations.append(.smallResolvingList(size)) }
        adaptations += unknownCommands.sorted { $0.rawValue < $1.rawValue }.map { .unknownCommand($0) }
        return adaptations
    }
}

extension HCIController {
    /// Resets the controller and reads what the host needs: address, version, supported
    /// commands and features, and the LE ACL buffers, which it then uses for flow control.
    /// Unmasks the events this host handles.
    public func initialize() async throws -> ControllerInfo {
        _ = try await send(ResetCommand())
        let version = try await send(ReadLocalVersionInformationCommand())
        let commands = try await send(ReadLocalSupportedCommandsCommand()).supportedCommands
        let lmpFeatures = commands.contains(.readLocalSupportedFeatures) ? try await send(ReadLocalSupportedFeaturesCommand()).features : 0
        let address = try await send(ReadBDADDRCommand()).address
        // Without a public address the controller may still know a static address of its own.
        // Zephyr's host asks its vendor commands only of a controller that has no public
        // address and speaks HCI 5.0 or later (hci_core.c, hci_vs_init); so does this one.
        let staticAddress = address == .zero && version.hciVersion >= Self.bluetooth5HCIVersion ? await readZephyrStaticAddress() : nil

        _ = try await send(SetEventMaskCommand(mask: .leHost))
        if commands.contains(.writeLEHostSupport) {
            // Dual-mode controllers only act on LE once the host says it supports LE
            // (Core 6.0, Vol 4, Part E, 7.3.79). LE-only controllers may refuse the command.
            _ = try? await send(WriteLEHostSupportCommand(leSupportedHost: true))
        }
        _ = try await send(LESetEventMaskCommand(mask: [
            .connectionComplete, .advertisingReport, .connectionUpdateComplete, .readRemoteFeaturesComplete,
            .longTermKeyRequest, .remoteConnectionParameterRequest, .dataLengthChange, .enhancedConnectionComplete,
            .phyUpdateComplete, .extendedAdvertisingReport, .scanTimeout, .advertisingSetTerminated,
            .channelSelectionAlgorithm,
        ]))

        var unknownCommands: Set<HCIOpcode> = []
        var dataLength: Int
        var bufferCount: Int
        if commands.contains(.leReadBufferSizeV2),
           let buffers = try await sendUnlessUnknown(LEReadBufferSizeV2Command(), noting: &unknownCommands) {
            (dataLength, bufferCount) = (Int(buffers.leACLDataPacketLength), Int(buffers.totalNumLEACLDataPackets))
        } else {
            let buffers = try await send(LEReadBufferSizeCommand())
            (dataLength, bufferCount) = (Int(buffers.leACLDataPacketLength), Int(buffers.totalNumLEACLDataPackets))
        }
        let sharesBuffers = dataLength == 0 || bufferCount == 0
        if sharesBuffers {
            // No dedicated LE buffers: LE shares the BR/EDR ones (Core 6.0, Vol 4, Part E, 7.8.2).
            let shared = try await send(ReadBufferSizeCommand())
            (dataLength, bufferCount) = (Int(shared.aclDataPacketLength), Int(shared.totalNumACLDataPackets))
        }
        guard dataLength > 0, bufferCount > 0 else {
            throw HCIError.unsupported("LE ACL data (the controller reports no ACL buffers)")
        }
        configureACLBuffers(dataLength: dataLength, count: bufferCount)

        let leFeatures = try await send(LEReadLocalSupportedFeaturesCommand()).features
        if commands.contains(.leWriteSuggestedDefaultDataLength), commands.contains(.leReadMaximumDataLength),
           let maximum = try? await send(LEReadMaximumDataLengthCommand()) {
            // Let new connections use the longest LE data PDUs the controller supports.
            _ = try? await send(LEWriteSuggestedDefaultDataLengthCommand(
                suggestedMaxTxOctets: maximum.supportedMaxTxOctets, suggestedMaxTxTime: maximum.supportedMaxTxTime))
        }
        var info = ControllerInfo(
            address: address, version: version, supportedCommands: commands, lmpFeatures: lmpFeatures,
            leFeatures: leFeatures, aclDataLength: dataLength, aclBufferCount: bufferCount
        )
        info.sharesACLBuffers = sharesBuffers
        info.staticAddress = staticAddress
        if commands.contains(.leReadFilterAcceptListSize),
           let size = try await sendUnlessUnknown(LEReadFilterAcceptListSizeCommand(), noting: &unknownCommands) {
            info.filterAcceptListSize = Int(size.filterAcceptListSize)
        }
        if commands.contains(.leReadResolvingListSize),
           let size = try await sendUnlessUnknown(LEReadResolvingListSizeCommand(), noting: &unknownCommands) {
            info.resolvingListSize = Int(size.resolvingListSize)
        }
        info.unknownCommands = unknownCommands
        return info
    }

    /// HCI_Version 0x09: Bluetooth Core 5.0 (Assigned Numbers, 2.1).
    static let bluetooth5HCIVersion: UInt8 = 0x09

    /// Sends a command the controller lists; `nil` (and the opcode noted) when it answers
    /// Unknown HCI Command all the same, as some controllers do.
    private func sendUnlessUnknown<Command: HCICommand>(_ command: Command, noting unknown: inout Set<HCIOpcode>) async throws
        -> Command.ReturnParameters? {
        do {
            return try await send(command)
        } catch HCIError.commandFailed(_, .unknownCommand) {
            unknown.insert(Command.opcode)
            return nil
        }
    }

    /// The controller's own static random address, when it is Zephyr's and knows one: Read
    /// Version Information, Read Supported Commands, then Read Static Addresses (Zephyr's
    /// `hci_vs.h`), each with a short limit. Any other answer (Unknown HCI Command from a
    /// controller that is not Zephyr's, an error, no answer, or no valid static address) gives
    /// `nil`, and the host makes an address of its own.
    private func readZephyrStaticAddress() async -> BluetoothAddress? {
        let limit = min(commandTimeout, Self.vendorCommandTimeout)
        guard (try? await send(ZephyrReadVersionInformationCommand(), timeout: limit)) != nil,
              let vendorCommands = try? await send(ZephyrReadSupportedCommandsCommand(), timeout: limit),
              vendorCommands.supportsReadStaticAddresses,
              let addresses = try? await send(ZephyrReadStaticAddressesCommand(), timeout: limit) else { return nil }
        return addresses.addresses.map(\.address).first(where: \.isStaticRandom)
    }

    /// How long a vendor command the controller may not know waits for its answer.
    static let vendorCommandTimeout: Duration = .seconds(1)
}
