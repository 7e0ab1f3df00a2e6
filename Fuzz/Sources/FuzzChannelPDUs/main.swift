import BluetoothCore
import BluetoothHost
import FuzzSupport

func basicFrame(_ bytes: [UInt8]) {
    let parsed = try? L2CAPBasicFrame.parse(bytes[...])
    let decoded = try? L2CAPBasicFrame.decode(bytes)
    fuzzCheck((parsed == nil) == (decoded == nil), "parse and decode disagree on \(fuzzHex(bytes))")
    guard let parsed, let decoded else { return }
    fuzzCheck(parsed.channelID == decoded.channelID && Array(parsed.payload) == decoded.payload, "parse and decode differ on \(fuzzHex(bytes))")
    fuzzCheck(decoded.encode() == bytes, "B-frame \(fuzzHex(bytes)) re-encodes as \(fuzzHex(decoded.encode()))")
    _ = decoded.description
}

func signaling(_ bytes: [UInt8]) {
    guard let packet = try? LESignalingPacket.decode(bytes) else { return }
    fuzzCheck(packet.encode() == bytes, "signaling packet \(fuzzHex(bytes)) re-encodes as \(fuzzHex(packet.encode()))")
    _ = packet.description
    guard let command = try? packet.command else { return }
    _ = command.description
    let rebuilt = LESignalingPacket(identifier: packet.identifier, command: command)
    fuzzCheck(rebuilt.code == packet.code, "\(command) encodes with code \(rebuilt.code), decoded from \(packet.code)")
    let again: LESignalingCommand
    do {
        again = try LESignalingPacket.decode(rebuilt.encode()).command
    } catch {
        fuzzFailure("\(command) encodes as \(fuzzHex(rebuilt.encode())), which does not decode: \(error)")
    }
    fuzzCheck(again == command, "\(fuzzHex(bytes)) decoded as \(command), round-trips as \(again)")
    if case let .connectionParameterUpdateRequest(request) = command {
        _ = request.violations.map(\.description)
    }
}

func securityManager(_ bytes: [UInt8]) {
    guard let pdu = try? SMPPDU.decode(bytes) else { return }
    _ = pdu.description
    let encoded = pdu.encode()
    let again: SMPPDU
    do {
        again = try SMPPDU.decode(encoded)
    } catch {
        fuzzFailure("\(pdu) encodes as \(fuzzHex(encoded)), which does not decode: \(error)")
    }
    fuzzCheck(again == pdu, "\(fuzzHex(bytes)) decoded as \(pdu), round-trips as \(again)")
    fuzzCheck(encoded.count == bytes.count, "SMP PDUs have one size per code: \(fuzzHex(bytes)) re-encodes as \(fuzzHex(encoded))")
}

func attribute(_ bytes: [UInt8]) {
    let pdu: ATTPDU
    do {
        pdu = try ATTPDU.decode(bytes)
    } catch {
        // What the server answers: nothing to a command or to a PDU for the client.
        if let answer = ATTPDU.serverErrorResponse(toUndecodable: bytes), let opcode = bytes.first.map(ATTOpcode.init(rawValue:)) {
            fuzzCheck(!opcode.isCommand, "an Error Response to the command \(opcode)")
            fuzzCheck(answer.requestOpcode == opcode, "an Error Response for \(answer.requestOpcode) to \(opcode)")
        }
        return
    }
    _ = pdu.description
    let encoded = pdu.encode()
    let again: ATTPDU
    do {
        again = try ATTPDU.decode(encoded)
    } catch {
        fuzzFailure("\(pdu) encodes as \(fuzzHex(encoded)), which does not decode: \(error)")
    }
    fuzzCheck(again == pdu, "\(fuzzHex(bytes)) decoded as \(pdu), round-trips as \(again)")
    fuzzCheck(pdu.opcode.rawValue == bytes.first, "\(fuzzHex(bytes)) decoded as a \(pdu.opcode)")
}

/// The PDUs of the LE fixed channels as a peer sends them: L2CAP B-frames (Core 6.0, Vol 3,
/// Part A, 3.1), LE signalling commands (Part A, 4), Security Manager PDUs (Part H, 3) and ATT
/// PDUs (Part F, 3.4). Decoding never traps; whatever decodes re-encodes to bytes that decode
/// to the same value (byte for byte where the format has a single encoding). An undecodable
/// ATT PDU gets the Error Response the server sends, and only for a request or an unknown
/// opcode without the Command flag (Part F, 3.3).
///
/// Input: a selector byte (which decoder), then the PDU.
runFuzzer { input in
    let selector = input.byte()
    let bytes = input.rest()
    switch selector % 4 {
    case 0: basicFrame(bytes)
    case 1: signaling(bytes)
    case 2: securityManager(bytes)
    default: attribute(bytes)
    }
}
