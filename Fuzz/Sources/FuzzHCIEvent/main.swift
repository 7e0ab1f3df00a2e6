import BluetoothCore
import BluetoothHCI
import FuzzSupport

/// Return parameters (after the Status octet) decode, re-encode and decode to the same value.
func roundTripReturnParameters<Command: HCICommand>(_: Command.Type, _ bytes: [UInt8]) {
    guard let parameters = try? Command.ReturnParameters.decode(returnParameters: bytes, context: Command.name) else { return }
    var writer = ByteWriter()
    parameters.encodeReturnParameters(into: &writer)
    let again: Command.ReturnParameters
    do {
        again = try Command.ReturnParameters.decode(returnParameters: writer.bytes, context: Command.name)
    } catch {
        fuzzFailure("\(Command.name) return parameters \(parameters) re-encode as \(fuzzHex(writer.bytes)), which does not decode: \(error)")
    }
    fuzzCheck(again == parameters, "\(Command.name) return parameters \(parameters) round-trip as \(again)")
}

/// HCI events as a controller sends them (Core 6.0, Vol 4, Part E, 7.7): decoding never traps,
/// and what decodes re-encodes to a packet that decodes to the same event, with a length octet
/// that matches. A Command Complete's return parameters decode as its command's would in
/// ``HCIController`` and round-trip the same way.
///
/// Input: the event packet (code, length, parameters), without the H4 indicator.
runFuzzer { input in
    let bytes = input.rest()
    guard let event = try? HCIEvent.decode(bytes) else { return }
    let encoded = event.encode()
    fuzzCheck(encoded.count >= 2 && Int(encoded[1]) == encoded.count - 2, "length octet of \(fuzzHex(encoded)) is wrong")
    fuzzCheck(encoded.count <= 257, "event longer than an HCI event can be: \(encoded.count) bytes")
    let again: HCIEvent
    do {
        again = try HCIEvent.decode(encoded)
    } catch {
        fuzzFailure("\(event) re-encoded as \(fuzzHex(encoded)), which does not decode: \(error)")
    }
    fuzzCheck(again == event, "\(fuzzHex(bytes)) decoded as \(event), re-encoded as \(fuzzHex(encoded)), decoded as \(again)")
    _ = event.description

    if case let .commandComplete(complete) = event, complete.returnParameters.count >= 1,
       let type = HCICommandCatalogue.commandType(for: complete.opcode) {
        roundTripReturnParameters(type, Array(complete.returnParameters.dropFirst()))
    }
}
