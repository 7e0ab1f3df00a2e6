import BluetoothCore
import BluetoothHCI
import Testing

/// Bytes from a hex string written in a test ("0e 04 01"); spaces are ignored.
func bytes(_ hex: String, sourceLocation: SourceLocation = #_sourceLocation) -> [UInt8] {
    guard let decoded = Hex.decode(hex) else {
        Issue.record("malformed hex in test: \(hex)", sourceLocation: sourceLocation)
        return []
    }
    return decoded
}

/// An address from its written form.
func address(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> BluetoothAddress {
    guard let parsed = BluetoothAddress(text) else {
        Issue.record("malformed address in test: \(text)", sourceLocation: sourceLocation)
        return .zero
    }
    return parsed
}

/// Checks that `command` encodes to the packet `hex` (opcode, length, parameters) and that
/// the packet decodes back to `command`, directly and through the catalogue.
func expectCommand<C: HCICommand>(_ command: C, _ hex: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let expected = bytes(hex, sourceLocation: sourceLocation)
    #expect(command.encode() == expected, "encode", sourceLocation: sourceLocation)
    let packet = try HCICommandPacket.decode(expected)
    #expect(packet.opcode == C.opcode, sourceLocation: sourceLocation)
    #expect(try C.decode(parameters: packet.parameters) == command, "decode", sourceLocation: sourceLocation)
    let viaCatalogue = try HCICommandCatalogue.decode(packet)
    #expect(viaCatalogue as? C == command, "catalogue decode", sourceLocation: sourceLocation)
}

/// Checks that a successful Command Complete event carrying `returnParameters` of command `C`
/// encodes to the event `hex`, and that the event decodes back to the same return parameters.
func expectReturn<C: HCICommand>(_ command: C.Type, _ returnParameters: C.ReturnParameters, _ hex: String,
                                 sourceLocation: SourceLocation = #_sourceLocation) throws {
    let expected = bytes(hex, sourceLocation: sourceLocation)
    let event = HCIEvent.commandComplete(CommandCompleteEvent(
        numberOfHCICommandPackets: 1, opcode: C.opcode, returnParameters: returnParameters.encodeWithSuccessStatus()))
    #expect(event.encode() == expected, "encode", sourceLocation: sourceLocation)
    guard case let .commandComplete(decoded) = try HCIEvent.decode(expected) else {
        Issue.record("not a Command Complete", sourceLocation: sourceLocation)
        return
    }
    #expect(decoded.opcode == C.opcode, sourceLocation: sourceLocation)
    #expect(decoded.status == .success, sourceLocation: sourceLocation)
    let parameters = try C.ReturnParameters.decode(returnParameters: Array(decoded.returnParameters.dropFirst()), context: C.name)
    #expect(parameters == returnParameters, "decode", sourceLocation: sourceLocation)
}

/// Checks that `event` encodes to the packet `hex` (code, length, parameters) and back.
func expectEvent(_ event: HCIEvent, _ hex: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let expected = bytes(hex, sourceLocation: sourceLocation)
    #expect(event.encode() == expected, "encode", sourceLocation: sourceLocation)
    #expect(try HCIEvent.decode(expected) == event, "decode", sourceLocation: sourceLocation)
}

/// Checks that decoding throws ``PacketDecodingError/invalidValue(context:field:value:)`` for
/// `field` with `value`.
func expectInvalidValue(field: String, value: UInt64, sourceLocation: SourceLocation = #_sourceLocation,
                        _ body: () throws -> Void) {
    let error = #expect(throws: PacketDecodingError.self, sourceLocation: sourceLocation) { try body() }
    guard case let .invalidValue(_, actualField, actualValue)? = error else {
        if let error { Issue.record("expected invalidValue, got \(error)", sourceLocation: sourceLocation) }
        return
    }
    #expect(actualField == field, sourceLocation: sourceLocation)
    #expect(actualValue == value, sourceLocation: sourceLocation)
}

/// Sixteen octets 0x00...0x0F.
let sequentialKey: [UInt8] = Array(0...15)
