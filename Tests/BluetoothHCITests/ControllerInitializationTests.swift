import BluetoothCore
import BluetoothTransport
import Synchronization
import Testing
@testable import BluetoothHCI

/// A scripted controller for `initialize()`: answers every command it knows with
/// configurable return parameters.
struct ScriptedController: Sendable {
    var supportedCommands: [SupportedCommands.Command] = [
        .reset, .readLocalVersionInformation, .readLocalSupportedFeatures, .readBDADDR, .setEventMask,
        .leSetEventMask, .leReadBufferSize, .leReadLocalSupportedFeatures,
    ]
    var leBuffers = LEReadBufferSizeCommand.ReturnParameters(leACLDataPacketLength: 27, totalNumLEACLDataPackets: 8)
    var leBuffersV2 = LEReadBufferSizeV2Command.ReturnParameters(
        leACLDataPacketLength: 251, totalNumLEACLDataPackets: 12, isoDataPacketLength: 0, totalNumISODataPackets: 0)
    var sharedBuffers = ReadBufferSizeCommand.ReturnParameters(
        aclDataPacketLength: 1021, synchronousDataPacketLength: 0, totalNumACLDataPackets: 6, totalNumSynchronousDataPackets: 0)
    var refuseLEHostSupport = false
    var address = Self.address
    var version = Self.version
    /// Lists LE Read Buffer Size [v2] but answers it Unknown HCI Command.
    var refusesBufferSizeV2 = false
    /// Answers Zephyr's vendor commands with this static address; `nil`: Unknown HCI Command.
    var zephyrStaticAddress: BluetoothAddress?

    static let version = ReadLocalVersionInformationCommand.ReturnParameters(
        hciVersion: 0x0C, hciSubversion: 1, lmpVersion: 0x0C, companyIdentifier: 0x0002, lmpSubversion: 2)
    static let address = BluetoothAddress("C0:FF:EE:00:00:01") ?? .zero
    static let lmpFeatures: UInt64 = 1 << 38
    static let leFeatures = LEFeatures(rawValue: 0x0000_0001_0000_00FF)
    static let maximumDataLength = LEReadMaximumDataLengthCommand.ReturnParameters(
        supportedMaxTxOctets: 251, supportedMaxTxTime: 2120, supportedMaxRxOctets: 251, supportedMaxRxTime: 2120)

    func answer(_ packet: H4Packet) -> [H4Packet] {
        guard let opcode = packet.commandOpcode else { return [] }
        let success: [UInt8] = [HCIStatus.success.rawValue]
        let unknown: [UInt8] = [HCIStatus.unknownCommand.rawValue]
        if opcode.group == HCIOpcode.vendorSpecific {
            guard let zephyrStaticAddress else { return [.complete(opcode, returnParameters: unknown)] }
            switch opcode {
            case ZephyrReadVersionInformationCommand.opcode:
                return [.complete(ZephyrReadVersionInformationCommand.self, .init(hardwarePlatform: 2, hardwareVariant: 2, firmwareVariant: 1,
                                                                                   firmwareVersion: 3, firmwareRevision: 0, firmwareBuild: 0))]
            case ZephyrReadSupportedCommandsCommand.opcode: return [.complete(ZephyrReadSupportedCommandsCommand.self, .init(bits: [0, 1, 8]))]
            case ZephyrReadStaticAddressesCommand.opcode:
                return [.complete(ZephyrReadStaticAddressesCommand.self, .init(addresses: [.init(address: zephyrStaticAddress, identityRoot: [])]))]
            default: return [.complete(opcode, returnParameters: unknown)]
            }
        }
        switch opcode {
        case ReadLocalVersionInformationCommand.opcode: return [.complete(ReadLocalVersionInformationCommand.self, version)]
        case ReadLocalSupportedCommandsCommand.opcode:
            return [.complete(ReadLocalSupportedCommandsCommand.self, .init(supportedCommands: SupportedCommands(supportedCommands)))]
        case ReadLocalSupportedFeaturesCommand.opcode: return [.complete(ReadLocalSupportedFeaturesCommand.self, .init(features: Self.lmpFeatures))]
        case ReadBDADDRCommand.opcode: return [.complete(ReadBDADDRCommand.self, .init(address: address))]
        case LEReadBufferSizeV2Command.opcode where refusesBufferSizeV2: return [.complete(opcode, returnParameters: unknown)]
        case LEReadBufferSizeCommand.opcode: return [.complete(LEReadBufferSizeCommand.self, leBuffers)]
        case LEReadBufferSizeV2Command.opcode: return [.complete(LEReadBufferSizeV2Command.self, leBuffersV2)]
        case ReadBufferSizeCommand.opcode: return [.complete(ReadBufferSizeCommand.self, sharedBuffers)]
        case LEReadLocalSupportedFeaturesCommand.opcode: return [.complete(LEReadLocalSupportedFeaturesCommand.self, .init(features: Self.leFeatures))]
        case LEReadMaximumDataLengthCommand.opcode: return [.complete(LEReadMaximumDataLengthCommand.self, Self.maximumDataLength)]
        case WriteLEHostSupportCommand.opcode where refuseLEHostSupport:
            return [.complete(opcode, returnParameters: [HCIStatus.unknownCommand.rawValue])]
        default: return [.complete(opcode, returnParameters: success)]
        }
    }
}

@Suite(.timeLimit(.minutes(1))) struct ControllerInitializationTests {
    func initialize(_ script: ScriptedController) async throws -> (Result<ControllerInfo, any Error>, HCIController, FakeTransport) {
        let transport = FakeTransport { script.answer($0) }
        let controller = HCIController(transport: transport)
        controller.start()
        let result: Result<ControllerInfo, any Error>
        do {
            result = .success(try await withTimeout { try await controller.initialize() })
        } catch let timeout as TestTimeout {
            throw timeout
        } catch {
            result = .failure(error)
        }
        return (result, controller, transport)
    }

    @Test func sendsTheInitializationSequenceAndReportsTheController() async throws {
        let (result, _, transport) = try await initialize(ScriptedController())
        let info = try result.get()
        #expect(transport.written.items.commandOpcodes == [
            ResetCommand.opcode, ReadLocalVersionInformationCommand.opcode, ReadLocalSupportedCommandsCommand.opcode,
            ReadLocalSupportedFeaturesCommand.opcode, ReadBDADDRCommand.opcode, SetEventMaskCommand.opcode,
            LESetEventMaskCommand.opcode, LEReadBufferSizeCommand.opcode, LEReadLocalSupportedFeaturesCommand.opcode,
        ])
        #expect(info.address == ScriptedController.address)
        #expect(info.version == ScriptedController.version)
        #expect(info.lmpFeatures == ScriptedController.lmpFeatures)
        #expect(info.leFeatures == ScriptedController.leFeatures)
        #expect(info.supports(.leReadBufferSize))
        #expect(!info.supports(.leReadBufferSizeV2))
        #expect(info.aclDataLength == 27)
        #expect(info.aclBufferCount == 8)
    }

    @Test func unmasksTheEventsTheHostHandles() async throws {
        let (result, _, transport) = try await initialize(ScriptedController())
        _ = try result.get()
        let commands = transport.written.items.compactMap { try? HCICommandPacket.decode($0.bytes) }
        let eventMask = try #require(commands.first { $0.opcode == SetEventMaskCommand.opcode })
        #expect(try SetEventMaskCommand.decode(parameters: eventMask.parameters).mask == .leHost)
        let leMask = try #require(commands.first { $0.opcode == LESetEventMaskCommand.opcode })
        let leEvents = try LESetEventMaskCommand.decode(parameters: leMask.parameters).mask
        #expect(leEvents.isSuperset(of: [.connectionComplete, .enhancedConnectionComplete, .advertisingReport,
                                         .extendedAdvertisingReport, .longTermKeyRequest]))
    }

    @Test func optionalCommandsAreSentOnlyWhenSupported() async throws {
        var script = ScriptedController()
        script.supportedCommands = [.leReadBufferSize, .writeLEHostSupport, .leReadMaximumDataLength, .leWriteSuggestedDefaultDataLength]
        let (result, _, transport) = try await initialize(script)
        let info = try result.get()
        let opcodes = transport.written.items.commandOpcodes
        #expect(!opcodes.contains(ReadLocalSupportedFeaturesCommand.opcode))
        #expect(info.lmpFeatures == 0)
        #expect(opcodes.contains(WriteLEHostSupportCommand.opcode))
        #expect(Array(opcodes.suffix(2)) == [LEReadMaximumDataLengthCommand.opcode, LEWriteSuggestedDefaultDataLengthCommand.opcode])
        let suggested = try #require(transport.written.items.compactMap { try? HCICommandPacket.decode($0.bytes) }.last)
        let write = try LEWriteSuggestedDefaultDataLengthCommand.decode(parameters: suggested.parameters)
        #expect(write.suggestedMaxTxOctets == 251)
        #expect(write.suggestedMaxTxTime == 2120)
    }

    @Test func anLEOnlyControllerMayRefuseWriteLEHostSupport() async throws {
        var script = ScriptedController()
        script.supportedCommands.append(.writeLEHostSupport)
        script.refuseLEHostSupport = true
        let (result, _, transport) = try await initialize(script)
        _ = try result.get()
        #expect(transport.written.items.commandOpcodes.contains(WriteLEHostSupportCommand.opcode))
    }

    @Test func usesLEReadBufferSizeV2WhenSupported() async throws {
        var script = ScriptedController()
        script.supportedCommands.append(.leReadBufferSizeV2)
        let (result, controller, transport) = try await initialize(script)
        let info = try result.get()
        let opcodes = transport.written.items.commandOpcodes
        #expect(opcodes.contains(LEReadBufferSizeV2Command.opcode))
        #expect(!opcodes.contains(LEReadBufferSizeCommand.opcode))
        #expect(info.aclDataLength == 251)
        #expect(info.aclBufferCount == 12)
        #expect(controller.aclDataLength == 251)
    }

    @Test(arguments: [(UInt16(0), UInt8(0)), (UInt16(27), UInt8(0)), (UInt16(0), UInt8(4))])
    func fallsBackToReadBufferSizeWithoutLEBuffers(length: UInt16, count: UInt8) async throws {
        var script = ScriptedController()
        script.leBuffers = .init(leACLDataPacketLength: length, totalNumLEACLDataPackets: count)
        let (result, controller, transport) = try await initialize(script)
        let info = try result.get()
        let opcodes = transport.written.items.commandOpcodes
        let leRead = try #require(opcodes.firstIndex(of: LEReadBufferSizeCommand.opcode))
        #expect(opcodes[leRead + 1] == ReadBufferSizeCommand.opcode)
        #expect(info.aclDataLength == 1021)
        #expect(info.aclBufferCount == 6)
        #expect(controller.aclDataLength == 1021)
    }

    @Test func noBuffersAtAllIsUnsupported() async throws {
        var script = ScriptedController()
        script.leBuffers = .init(leACLDataPacketLength: 0, totalNumLEACLDataPackets: 0)
        script.sharedBuffers = .init(aclDataPacketLength: 0, synchronousDataPacketLength: 0, totalNumACLDataPackets: 0, totalNumSynchronousDataPackets: 0)
        let (result, _, transport) = try await initialize(script)
        guard case let .failure(error) = result, case .unsupported? = error as? HCIError else {
            Issue.record("expected HCIError.unsupported, got \(result)")
            return
        }
        #expect(transport.written.items.commandOpcodes.last == ReadBufferSizeCommand.opcode)
    }

    @Test func theReportedBuffersDriveACLFlowControl() async throws {
        var script = ScriptedController()
        script.leBuffers = .init(leACLDataPacketLength: 20, totalNumLEACLDataPackets: 2)
        let (result, controller, transport) = try await initialize(script)
        _ = try result.get()
        let before = transport.written.count
        controller.sendACL(connectionHandle: 1, pdu: [56, 0, 4, 0] + [UInt8](repeating: 7, count: 56), completion: nil)
        let packets = transport.written.items.dropFirst(before).compactMap(\.aclPacket)
        // 60 bytes in fragments of 20; two buffers, so two go out now.
        #expect(packets.map(\.data.count) == [20, 20])
    }

    @Test func aListedLEReadBufferSizeV2AnsweredUnknownFallsBackToV1() async throws {
        var script = ScriptedController()
        script.supportedCommands.append(.leReadBufferSizeV2)
        script.refusesBufferSizeV2 = true
        let (result, _, transport) = try await initialize(script)
        let info = try result.get()
        let opcodes = transport.written.items.commandOpcodes
        let v2 = try #require(opcodes.firstIndex(of: LEReadBufferSizeV2Command.opcode))
        #expect(opcodes[v2 + 1] == LEReadBufferSizeCommand.opcode)
        #expect(info.aclDataLength == 27 && info.aclBufferCount == 8)
        #expect(info.unknownCommands == [LEReadBufferSizeV2Command.opcode])
        #expect(!info.supports(LEReadBufferSizeV2Command.self, listedAs: .leReadBufferSizeV2))
        #expect(info.adaptations.contains(.noLEReadBufferSizeV2) && info.adaptations.contains(.unknownCommand(LEReadBufferSizeV2Command.opcode)))
    }

    @Test func aControllerWithAPublicAddressIsNotAskedVendorCommands() async throws {
        let (result, _, transport) = try await initialize(ScriptedController())
        #expect(try result.get().hasPublicAddress)
        #expect(!transport.written.items.commandOpcodes.contains { $0.group == HCIOpcode.vendorSpecific })
    }

    @Test func withoutAPublicAddressZephyrsStaticAddressIsRead() async throws {
        var script = ScriptedController()
        script.address = .zero
        script.zephyrStaticAddress = BluetoothAddress("C4:5A:7E:11:22:33")
        let (result, _, transport) = try await initialize(script)
        let info = try result.get()
        #expect(!info.hasPublicAddress && info.staticAddress == script.zephyrStaticAddress)
        #expect(info.adaptations.first == .noPublicAddress)
        #expect(transport.written.items.commandOpcodes.filter { $0.group == HCIOpcode.vendorSpecific } == [
            ZephyrReadVersionInformationCommand.opcode, ZephyrReadSupportedCommandsCommand.opcode, ZephyrReadStaticAddressesCommand.opcode,
        ])
    }

    @Test func aControllerThatIsNotZephyrsAnswersUnknownAndInitializationGoesOn() async throws {
        var script = ScriptedController()
        script.address = .zero
        let (result, _, transport) = try await initialize(script)
        let info = try result.get()
        #expect(info.staticAddress == nil && !info.hasPublicAddress)
        // One vendor command, answered Unknown HCI Command: not Zephyr's, asked no more.
        #expect(transport.written.items.commandOpcodes.filter { $0.group == HCIOpcode.vendorSpecific } == [ZephyrReadVersionInformationCommand.opcode])
    }

    @Test func aBluetooth4ControllerWithoutAPublicAddressIsNotAskedVendorCommands() async throws {
        var script = ScriptedController()
        script.address = .zero
        script.zephyrStaticAddress = BluetoothAddress("C4:5A:7E:11:22:33")
        script.version = .init(hciVersion: 0x08, hciSubversion: 1, lmpVersion: 0x08, companyIdentifier: 0x05F1, lmpSubversion: 1)
        let (result, _, transport) = try await initialize(script)
        #expect(try result.get().staticAddress == nil)
        #expect(!transport.written.items.commandOpcodes.contains { $0.group == HCIOpcode.vendorSpecific })
    }

    @Test func theCommandFamilyIsExtendedOnlyWithAdvertisingScanningAndConnecting() {
        var info = ControllerInfo(address: ScriptedController.address, version: ScriptedController.version,
                                  supportedCommands: SupportedCommands([.leSetExtendedAdvertisingParameters, .leSetExtendedAdvertisingData,
                                                                        .leSetExtendedAdvertisingEnable, .leSetExtendedScanParameters,
                                                                        .leSetExtendedScanEnable]),
                                  lmpFeatures: 0, leFeatures: [.extendedAdvertising], aclDataLength: 27, aclBufferCount: 8)
        #expect(info.commandFamily == .legacy, "no LE Extended Create Connection")
        info.supportedCommands.insert(.leExtendedCreateConnection)
        #expect(info.commandFamily == .extended)
        info.leFeatures = []
        #expect(info.commandFamily == .legacy, "no LE Extended Advertising feature")
        #expect(info.adaptations.contains(.legacyCommandsOnly))
    }

    @Test func aFailingMandatoryCommandFailsInitialization() async throws {
        let transport = FakeTransport { packet in
            packet.commandOpcode == ReadBDADDRCommand.opcode
                ? [.complete(ReadBDADDRCommand.opcode, returnParameters: [HCIStatus.hardwareFailure.rawValue])]
                : ScriptedController().answer(packet)
        }
        let controller = HCIController(transport: transport)
        controller.start()
        await #expect(throws: HCIError.commandFailed(ReadBDADDRCommand.opcode, .hardwareFailure)) {
            try await withTimeout { try await controller.initialize() }
        }
        #expect(transport.written.items.commandOpcodes.last == ReadBDADDRCommand.opcode)
    }
}
