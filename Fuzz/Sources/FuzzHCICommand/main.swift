import BluetoothCore
import BluetoothHCI
import FuzzSupport

func roundTrip<Command: HCICommand>(_ command: Command) {
    let encoded = command.encode()
    let again: any HCICommand
    do {
        again = try HCICommandCatalogue.decode(try HCICommandPacket.decode(encoded))
    } catch {
        fuzzFailure("\(Command.name) \(command) encodes as \(fuzzHex(encoded)), which does not decode: \(error)")
    }
    fuzzCheck((again as? Command) == command, "\(Command.name) \(command) round-trips as \(again)")
}

/// HCI command packets as a host sends them and the virtual controller decodes them
/// (Core 6.0, Vol 4, Part E, 5.4.1 and 7): decoding never traps, and a command that decodes
/// re-encodes to a packet that decodes to the same command.
///
/// Input: the command packet (opcode, length, parameters), without the H4 indicator. The
/// first two bytes are replaced by an opcode of the catalogue when the first byte is odd, so
/// that most inputs reach a command's decoder.
runFuzzer { input in
    let selector = input.byte()
    var bytes = input.rest()
    if selector & 1 == 1, bytes.count >= 2 {
        let type = HCICommandCatalogue.all[Int(selector >> 1) % HCICommandCatalogue.all.count]
        bytes[0] = UInt8(truncatingIfNeeded: type.opcode.rawValue)
        bytes[1] = UInt8(type.opcode.rawValue >> 8)
    }
    guard let packet = try? HCICommandPacket.decode(bytes) else { return }
    fuzzCheck(packet.encode() == bytes, "command packet \(fuzzHex(bytes)) re-encodes as \(fuzzHex(packet.encode()))")
    _ = packet.description
    guard let command = try? HCICommandCatalogue.decode(packet) else { return }
    roundTrip(command)
}
