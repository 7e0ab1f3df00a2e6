// Internal API: the message stream's framing (DBusMessageStream) and the signature parser over
// wire bytes, which the connection's reader runs on what a peer sends.
@testable import DBus
import FuzzSupport

/// D-Bus messages as a peer (the bus, bluetoothd) sends them: decoding never traps; a message
/// that decodes re-encodes, in either byte order, to bytes that frame to their own length and
/// decode to a message that encodes the same; the stream reader, fed the bytes in chunks of
/// any size, delivers what a whole-message decode gives and fails with a typed error otherwise.
///
/// Input: one byte (bits 0-1: how many file descriptors came with the bytes; bits 2-7: the
/// stream's read size less one), then the bytes.
runFuzzer { input in
    let settings = input.byte()
    let bytes = input.rest()
    // Stand-ins that own no descriptor (closing -1 does nothing).
    let descriptors = (0..<Int(settings & 3)).map { _ in DBusFileDescriptor(taking: -1) }
    let chunk = Int(settings >> 2) + 1

    _ = try? DBusSignature(bytes: bytes.prefix(300)[...])

    var decoded: DBusMessage?
    do throws(DBusWireError) {
        decoded = try DBusMessage.decode(bytes, fileDescriptors: descriptors)
    } catch {
        _ = error.description
    }
    if let message = decoded {
        _ = message.description
        for order in [DBusByteOrder.little, .big] {
            let encoded: DBusEncodedMessage
            do {
                encoded = try message.encode(byteOrder: order)
            } catch {
                fuzzFailure("\(message) decoded from \(fuzzHex(bytes.prefix(64))) does not encode (\(order)): \(error)")
            }
            let framed = try? DBusMessage.framedLength(encoded.bytes[...])
            fuzzCheck(framed == encoded.bytes.count, "encoded length \(encoded.bytes.count), framed as \(String(describing: framed))")
            let again: DBusMessage
            do {
                again = try DBusMessage.decode(encoded.bytes, fileDescriptors: encoded.fileDescriptors)
            } catch {
                fuzzFailure("\(message) re-encoded as \(fuzzHex(encoded.bytes.prefix(64))) does not decode: \(error)")
            }
            let twice = try? again.encode(byteOrder: order)
            fuzzCheck(twice?.bytes == encoded.bytes, "\(message) encodes differently after a round trip (\(order))")
        }
    }

    // The connection's reader: the same bytes in chunks.
    var stream = DBusMessageStream(limits: DBusChannel.Limits(maximumMessageLength: DBusMessage.maximumLength, maximumQueuedBytes: 1 << 20))
    var delivered: [DBusMessage] = []
    var failed = false
    var offset = 0
    while offset < bytes.count, !failed {
        let end = min(bytes.count, offset + chunk)
        do {
            try stream.append(bytes[offset..<end], fileDescriptors: offset == 0 ? descriptors : []) { delivered.append($0) }
        } catch {
            failed = true
        }
        offset = end
    }
    if let message = decoded {
        fuzzCheck(!failed && delivered.count == 1, "one message decodes whole, the stream gave \(delivered.count) (failed: \(failed))")
        let expected = try? message.encode()
        fuzzCheck(delivered.first.flatMap { try? $0.encode() }?.bytes == expected?.bytes, "the stream's message differs from the whole decode")
    }
}
