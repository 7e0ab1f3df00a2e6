import BluetoothCore

/// What the host learned about its controller while initializing it.
public struct ControllerInfo: Sendable, Equatable {
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

    public func supports(_ command: SupportedCommands.Command) -> Bool {
        supportedCommands.contains(command)
    }

    /// Extended scanning needs both of its commands (Core 6.0, Vol 4, Part E, 7.8.64-65).
    public var supportsExtendedScanning: Bool {
        supports(.leSetExtendedScanParameters) && supports(.leSetExtendedScanEnable)
    }

    public var supportsExtendedCreateConnection: Bool { supports(.leExtendedCreateConnection) }

    /// Extended advertising: the LE feature (bit 12) and the commands that run advertising
    /// sets (Core 6.0, Vol 4, Part E, 7.8.53-7.8.56, 7.8.58). Without it the host advertises
    /// with the legacy commands.
    public var supportsExtendedAdvertising: Bool {
        leFeatures.contains(.extendedAdvertising) && supports(.leSetExtendedAdvertisingParameters)
            && supports(.leSetExtendedAdvertisingData) && supports(.leSetExtendedAdvertisingEnable)
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

        var dataLength: Int
        var bufferCount: Int
        if commands.contains(.leReadBufferSizeV2) {
            let buffers = try await send(LEReadBufferSizeV2Command())
            (dataLength, bufferCount) = (Int(buffers.leACLDataPacketLength), Int(buffers.totalNumLEACLDataPackets))
        } else {
            let buffers = try await send(LEReadBufferSizeCommand())
            (dataLength, bufferCount) = (Int(buffers.leACLDataPacketLength), Int(buffers.totalNumLEACLDataPackets))
        }
        if dataLength == 0 || bufferCount == 0 {
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
        return ControllerInfo(
            address: address, version: version, supportedCommands: commands, lmpFeatures: lmpFeatures,
            leFeatures: leFeatures, aclDataLength: dataLength, aclBufferCount: bufferCount
        )
    }
}
