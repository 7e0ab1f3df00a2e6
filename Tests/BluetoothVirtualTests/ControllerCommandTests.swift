import BluetoothCore
import BluetoothHCI
import BluetoothTransport
@testable import BluetoothVirtual
import Testing

@Suite("Virtual controller: HCI commands", .timeLimit(.minutes(1)))
struct ControllerCommandTests {
    let link = VirtualLink.manual()

    func makeHost(configuration: VirtualController.Configuration = .init()) -> HCITestHost {
        HCITestHost(link.addController(name: "dut", address: TestAddresses.central, configuration: configuration))
    }

    @Test func informationalCommands() async throws {
        let host = makeHost(configuration: .init(aclDataLength: 27, aclBufferCount: 3, txPower: -4))
        try await host.complete(ResetCommand())
        let version = try await host.run(ReadLocalVersionInformationCommand())
        #expect(version.hciVersion == 0x0D)
        #expect(version.companyIdentifier == 0xFFFF)
        #expect(try await host.run(ReadBDADDRCommand()).address == TestAddresses.central)
        let features = try await host.run(ReadLocalSupportedFeaturesCommand()).features
        #expect(features & (1 << 38) != 0, "LE Supported (Controller)")
        #expect(features & (1 << 37) != 0, "BR/EDR Not Supported")
        let buffers = try await host.run(LEReadBufferSizeCommand())
        #expect(buffers.leACLDataPacketLength == 27)
        #expect(buffers.totalNumLEACLDataPackets == 3)
        let buffersV2 = try await host.run(LEReadBufferSizeV2Command())
        #expect(buffersV2.leACLDataPacketLength == 27)
        #expect(buffersV2.totalNumISODataPackets == 0)
        #expect(try await host.run(ReadBufferSizeCommand()).totalNumACLDataPackets == 3)
        let leFeatures = try await host.run(LEReadLocalSupportedFeaturesCommand()).features
        #expect(leFeatures.contains(.dataPacketLengthExtension))
        #expect(leFeatures.contains(.encryption))
        #expect(try await host.run(LEReadAdvertisingPhysicalChannelTxPowerCommand()).txPowerLevel == -4)
        let maximum = try await host.run(LEReadMaximumDataLengthCommand())
        #expect(maximum.supportedMaxTxOctets == 251)
        #expect(maximum.supportedMaxTxTime == 2120)
        let commands = try await host.run(ReadLocalSupportedCommandsCommand()).supportedCommands
        #expect(commands == ControllerCapabilities.supportedCommands)
        #expect(commands.contains(.leSetExtendedScanEnable))
        // Extended advertising sets (Core 6.0, Vol 4, Part E, 7.8.52-7.8.60) and their LE feature.
        #expect(commands.contains(.leSetExtendedAdvertisingEnable))
        #expect(commands.contains(.leClearAdvertisingSets))
        #expect(leFeatures.contains(.extendedAdvertising))
    }

    @Test func theHostControllerInitializationOfOurHCILayerSucceeds() async throws {
        let transport = link.addController(address: TestAddresses.central).makeTransport()
        let controller = HCIController(transport: transport)
        controller.start()
        let info = try await controller.initialize()
        #expect(info.address == TestAddresses.central)
        #expect(info.aclDataLength == 251)
        #expect(info.aclBufferCount == 8)
        #expect(info.supportsExtendedScanning)
        controller.close()
    }

    @Test func randomNumbersDiffer() async throws {
        let host = makeHost()
        let first = try await host.run(LERandCommand()).randomNumber
        let second = try await host.run(LERandCommand()).randomNumber
        #expect(first != second)
    }

    @Test func unknownOpcodeGetsUnknownHCICommand() async throws {
        let host = makeHost()
        // Read Local Name (0x0C14) and a vendor command (0xFC01): not implemented.
        for opcode in [HCIOpcode(rawValue: 0x0C14), HCIOpcode(rawValue: 0xFC01)] {
            try host.sendRaw(HCICommandPacket(opcode: opcode, parameters: [1, 2, 3]).encode())
            let complete = try await host.commandComplete(opcode)
            #expect(complete.status == .unknownCommand)
            #expect(complete.numberOfHCICommandPackets == 1)
        }
    }

    @Test func malformedStatusCommandGetsCommandStatus() async throws {
        let host = makeHost()
        // LE Enable Encryption with 5 of its 28 parameter octets: refused the way the command
        // is acknowledged, with Command Status (Core 6.0, Vol 4, Part E, 4.5).
        try host.sendRaw(HCICommandPacket(opcode: LEEnableEncryptionCommand.opcode, parameters: [0x40, 0x00, 1, 2, 3]).encode())
        #expect(try await host.commandStatus(LEEnableEncryptionCommand.opcode).status == .invalidCommandParameters)
        try host.sendRaw(HCICommandPacket(opcode: LELongTermKeyRequestReplyCommand.opcode, parameters: [0x40, 0x00, 1, 2, 3]).encode())
        #expect(try await host.commandComplete(LELongTermKeyRequestReplyCommand.opcode).status == .invalidCommandParameters)
    }

    @Test func malformedCommandsAreRefusedNotFatal() async throws {
        let host = makeHost()
        // Set Event Mask with 3 of its 8 parameter octets.
        try host.sendRaw(HCICommandPacket(opcode: SetEventMaskCommand.opcode, parameters: [1, 2, 3]).encode())
        #expect(try await host.commandComplete(SetEventMaskCommand.opcode).status == .invalidCommandParameters)
        // A length octet that disagrees with the bytes that follow.
        try host.sendRaw([0x03, 0x0C, 0x05, 0x00])
        #expect(try await host.commandComplete(ResetCommand.opcode).status == .invalidCommandParameters)
        // LE Set Scan Enable with Filter_Duplicates 0x02 (not a boolean).
        try host.sendRaw(HCICommandPacket(opcode: LESetScanEnableCommand.opcode, parameters: [1, 2]).encode())
        #expect(try await host.commandComplete(LESetScanEnableCommand.opcode).status == .invalidCommandParameters)
        // Advertising data of 32 octets.
        try host.sendRaw(HCICommandPacket(opcode: LESetAdvertisingDataCommand.opcode, parameters: [32] + [UInt8](repeating: 0, count: 31)).encode())
        #expect(try await host.commandComplete(LESetAdvertisingDataCommand.opcode).status == .invalidCommandParameters)
        // A status-type command with trailing bytes gets Command Status.
        try host.sendRaw(HCICommandPacket(opcode: DisconnectCommand.opcode, parameters: [1, 0, 0x13, 0xFF]).encode())
        #expect(try await host.commandStatus(DisconnectCommand.opcode).status == .invalidCommandParameters)
        // One byte: no opcode at all. The credit still comes back.
        try host.sendRaw([0x03])
        #expect(try await host.commandComplete(.noOperation).returnParameters.isEmpty)
        // Still alive.
        #expect(try await host.complete(ResetCommand()).status == .success)
    }

    @Test func outOfRangeParametersAreInvalid() async throws {
        let host = makeHost()
        #expect(try await host.complete(LESetScanParametersCommand(scanType: .active, scanInterval: 0x10, scanWindow: 0x20)).status == .invalidCommandParameters)
        #expect(try await host.complete(LESetScanParametersCommand(scanType: .active, scanInterval: 0x02, scanWindow: 0x02)).status == .invalidCommandParameters)
        #expect(try await host.complete(LESetAdvertisingParametersCommand(intervalMin: 0x10, intervalMax: 0x20)).status == .invalidCommandParameters)
        #expect(try await host.complete(LESetAdvertisingParametersCommand(intervalMin: 0x40, intervalMax: 0x20)).status == .invalidCommandParameters)
        #expect(try await host.complete(LEWriteSuggestedDefaultDataLengthCommand(suggestedMaxTxOctets: 26, suggestedMaxTxTime: 328)).status == .invalidCommandParameters)
        #expect(try await host.status(LECreateConnectionCommand(
            scanInterval: 0x60, scanWindow: 0x60, peerAddressType: .public, peerAddress: TestAddresses.peripheral,
            connectionIntervalMin: 24, connectionIntervalMax: 12, maxLatency: 0, supervisionTimeout: 100)) == .invalidCommandParameters)
        #expect(try await host.status(LECreateConnectionCommand(
            scanInterval: 0x60, scanWindow: 0x60, peerAddressType: .public, peerAddress: TestAddresses.peripheral,
            connectionIntervalMin: 24, connectionIntervalMax: 24, maxLatency: 10, supervisionTimeout: 20)) == .invalidCommandParameters)
        #expect(!host.controller.isInitiating)
        // The extended commands after a reset: the legacy ones were used (Vol 4, Part E, 3.1.1).
        #expect(try await host.complete(ResetCommand()).status == .success)
        #expect(try await host.complete(LESetExtendedScanParametersCommand(le1M: .init(scanType: .passive, scanInterval: 0x10, scanWindow: 0x11))).status == .invalidCommandParameters)
    }

    /// Core 6.0, Vol 4, Part E, 3.1.1: once a host used a legacy advertising, scanning or
    /// initiating command since the reset, an extended one is Command Disallowed, and the
    /// other way round; a reset forgets the choice.
    @Test func legacyAndExtendedCommandsAreNeverMixed() async throws {
        let host = makeHost()
        #expect(try await host.complete(LESetScanParametersCommand(scanType: .active, scanInterval: 0x20, scanWindow: 0x10)).status == .success)
        // Commands of neither family stay allowed.
        #expect(try await host.complete(LESetRandomAddressCommand(address: TestAddresses.third)).status == .success)
        #expect(try await host.complete(LEReadMaximumAdvertisingDataLengthCommand()).status == .commandDisallowed)
        #expect(try await host.complete(LESetExtendedScanParametersCommand(le1M: .init(scanType: .passive, scanInterval: 0x20, scanWindow: 0x10))).status == .commandDisallowed)
        #expect(try await host.complete(LESetExtendedAdvertisingParametersCommand(advertisingHandle: 0, properties: [.legacy, .connectable, .scannable],
                                                                                  primaryIntervalMin: 0x20, primaryIntervalMax: 0x20)).status == .commandDisallowed)
        #expect(try await host.status(LEExtendedCreateConnectionCommand(
            peerAddressType: .public, peerAddress: TestAddresses.peripheral,
            le1M: .init(scanInterval: 0x60, scanWindow: 0x60, connectionIntervalMin: 24, connectionIntervalMax: 24,
                        maxLatency: 0, supervisionTimeout: 100))) == .commandDisallowed)
        #expect(try await host.complete(LESetAdvertisingParametersCommand(intervalMin: 0x20, intervalMax: 0x20)).status == .success)

        // After a reset the extended family may go first, and then the legacy one is refused.
        #expect(try await host.complete(ResetCommand()).status == .success)
        #expect(try await host.complete(LEReadNumberOfSupportedAdvertisingSetsCommand()).status == .success)
        #expect(try await host.complete(LESetAdvertisingParametersCommand(intervalMin: 0x20, intervalMax: 0x20)).status == .commandDisallowed)
        #expect(try await host.complete(LEReadAdvertisingPhysicalChannelTxPowerCommand()).status == .commandDisallowed)
        #expect(try await host.complete(LESetScanEnableCommand(enable: true, filterDuplicates: false)).status == .commandDisallowed)
        #expect(try await host.status(LECreateConnectionCommand(
            scanInterval: 0x60, scanWindow: 0x60, peerAddressType: .public, peerAddress: TestAddresses.peripheral,
            connectionIntervalMin: 24, connectionIntervalMax: 24, maxLatency: 0, supervisionTimeout: 100)) == .commandDisallowed)
        #expect(!host.controller.isScanning && !host.controller.isInitiating)
        #expect(try await host.complete(LESetExtendedScanParametersCommand(le1M: .init(scanType: .passive, scanInterval: 0x20, scanWindow: 0x10))).status == .success)
    }

    @Test func scanningStateRules() async throws {
        let host = makeHost()
        #expect(try await host.complete(LESetScanParametersCommand(scanType: .active, scanInterval: 0x20, scanWindow: 0x10)).status == .success)
        #expect(try await host.complete(LESetScanEnableCommand(enable: true, filterDuplicates: false)).status == .success)
        #expect(host.controller.isScanning)
        // Enabling again is allowed (Core 6.0, Vol 4, Part E, 7.8.11); changing parameters is not.
        #expect(try await host.complete(LESetScanEnableCommand(enable: true, filterDuplicates: true)).status == .success)
        #expect(try await host.complete(LESetScanParametersCommand(scanType: .passive, scanInterval: 0x20, scanWindow: 0x10)).status == .commandDisallowed)
        #expect(try await host.complete(LESetRandomAddressCommand(address: TestAddresses.third)).status == .commandDisallowed)
        #expect(try await host.complete(LESetScanEnableCommand(enable: false, filterDuplicates: false)).status == .success)
        #expect(try await host.complete(LESetScanEnableCommand(enable: false, filterDuplicates: false)).status == .success)
        #expect(!host.controller.isScanning)
        #expect(try await host.complete(LESetRandomAddressCommand(address: TestAddresses.third)).status == .success)
        #expect(host.controller.randomAddress == TestAddresses.third)

        // The same rule for extended scanning (after a reset: one family at a time).
        #expect(try await host.complete(ResetCommand()).status == .success)
        let phy = LESetExtendedScanParametersCommand.PHYParameters(scanType: .active, scanInterval: 0x20, scanWindow: 0x10)
        #expect(try await host.complete(LESetExtendedScanParametersCommand(le1M: phy)).status == .success)
        #expect(try await host.complete(LESetExtendedScanEnableCommand(enable: true)).status == .success)
        #expect(host.controller.isScanning)
        #expect(try await host.complete(LESetExtendedScanParametersCommand(le1M: phy)).status == .commandDisallowed)
        #expect(try await host.complete(LESetExtendedScanEnableCommand(enable: false)).status == .success)
        #expect(!host.controller.isScanning)
    }

    @Test func advertisingStateRules() async throws {
        let host = makeHost()
        // A random own address needs LE Set Random Address first.
        #expect(try await host.complete(LESetAdvertisingParametersCommand(intervalMin: 0x20, intervalMax: 0x20, ownAddressType: .random)).status == .success)
        #expect(try await host.complete(LESetAdvertisingEnableCommand(enable: true)).status == .invalidCommandParameters)
        #expect(!host.controller.isAdvertising)
        #expect(try await host.complete(LESetRandomAddressCommand(address: TestAddresses.third)).status == .success)
        #expect(try await host.complete(LESetAdvertisingEnableCommand(enable: true)).status == .success)
        #expect(host.controller.isAdvertising)
        #expect(try await host.complete(LESetAdvertisingEnableCommand(enable: true)).status == .success)
        #expect(try await host.complete(LESetAdvertisingParametersCommand(intervalMin: 0x20, intervalMax: 0x20)).status == .commandDisallowed)
        #expect(try await host.complete(LESetAdvertisingDataCommand(data: [2, 1, 6])).status == .success, "data may change while advertising")
        #expect(try await host.complete(ResetCommand()).status == .success)
        #expect(!host.controller.isAdvertising)
    }

    @Test func connectionCommandsOnUnknownHandles() async throws {
        let host = makeHost()
        #expect(try await host.status(DisconnectCommand(connectionHandle: 0x0123)) == .unknownConnectionIdentifier)
        #expect(try await host.status(LEConnectionUpdateCommand(connectionHandle: 0x0123, connectionIntervalMin: 12, connectionIntervalMax: 12, maxLatency: 0, supervisionTimeout: 100)) == .unknownConnectionIdentifier)
        #expect(try await host.status(LEReadRemoteFeaturesCommand(connectionHandle: 0x0123)) == .unknownConnectionIdentifier)
        #expect(try await host.status(ReadRemoteVersionInformationCommand(connectionHandle: 0x0123)) == .unknownConnectionIdentifier)
        #expect(try await host.status(LESetPHYCommand(connectionHandle: 0x0123, txPHYs: .le2M, rxPHYs: .le2M)) == .unknownConnectionIdentifier)
        let rssi = try await host.complete(ReadRSSICommand(connectionHandle: 0x0123))
        #expect(rssi.status == .unknownConnectionIdentifier)
        #expect(Array(rssi.returnParameters.dropFirst().prefix(2)) == [0x23, 0x01], "the handle is returned")
        #expect(try await host.complete(LESetDataLengthCommand(connectionHandle: 0x0123, txOctets: 251, txTime: 2120)).status == .unknownConnectionIdentifier)
        #expect(try await host.complete(LEReadPHYCommand(connectionHandle: 0x0123)).status == .unknownConnectionIdentifier)
        #expect(try await host.complete(LELongTermKeyRequestNegativeReplyCommand(connectionHandle: 0x0123)).status == .unknownConnectionIdentifier)
        #expect(try await host.complete(LERemoteConnectionParameterRequestReplyCommand(connectionHandle: 0x0123, intervalMin: 12, intervalMax: 12, maxLatency: 0, timeout: 100)).status == .unknownConnectionIdentifier)
        #expect(try await host.complete(LECreateConnectionCancelCommand()).status == .commandDisallowed, "nothing to cancel")
    }

    @Test func eventMasksAreHonoured() async throws {
        let link = VirtualLink.manual()
        let scanner = HCITestHost(link.addController(name: "scanner", address: TestAddresses.central))
        let advertiser = HCITestHost(link.addController(name: "advertiser", address: TestAddresses.peripheral, position: .init(x: 1, y: 0)))
        try await advertiser.initialize()
        try await advertiser.advertise(data: [2, 1, 6])
        // LE Meta allowed but the advertising report subevent masked out.
        try await scanner.initialize(leEvents: [.connectionComplete])
        #expect(try await scanner.complete(LESetScanEnableCommand(enable: true, filterDuplicates: false)).status == .success)
        #expect(try await scanner.expectNothing("advertising report", for: .milliseconds(300)) { $0.le != nil })
        // Now unmasked: reports flow.
        try await scanner.complete(LESetEventMaskCommand(mask: [.advertisingReport]))
        try await scanner.leEvent("advertising report") { if case .advertisingReport = $0 { return true }; return false }
        // The page-1 mask without LE Meta silences every LE event.
        try await scanner.complete(SetEventMaskCommand(mask: [.disconnectionComplete]))
        // Events come in order: the reports sent before the Command Complete are in already.
        scanner.inbox.discard { $0.le != nil }
        #expect(try await scanner.expectNothing("LE event", for: .milliseconds(300)) { $0.le != nil })
    }
}
