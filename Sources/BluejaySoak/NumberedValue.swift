import Bluejay
import Foundation

/// The two numbered characteristics of a soak peripheral.
enum NumberedStream: Int, CaseIterable, Sendable, Hashable, CustomStringConvertible {
    case notifications
    case indications

    var characteristic: CharacteristicIdentifier {
        self == .notifications ? SoakIdentifiers.notifying : SoakIdentifiers.indicating
    }

    var description: String { self == .notifications ? "notifications" : "indications" }
}

/// A notification or indication of a soak peripheral: a 32-bit sequence number (little
/// endian), the index of the peripheral that sent it, and padding; stamped with the instant
/// it was made into a value. Bluejay makes the values of an `async` listen on the transport's
/// reader thread as each batch arrives, so the stamp is the arrival time.
struct NumberedValue: Receivable, Sendable {
    let sequence: UInt32
    let peripheral: Int
    let receivedAt: ContinuousClock.Instant

    init(bluetoothData: Data) throws {
        sequence = try bluetoothData.extract(start: 0, length: 4)
        let index: UInt8 = try bluetoothData.extract(start: 4, length: 1)
        peripheral = Int(index)
        receivedAt = .now
    }

    /// What peripheral `peripheral` sends: `sequence`, its index, then `padding` bytes.
    static func encode(_ sequence: UInt32, peripheral: Int, padding: Int) -> [UInt8] {
        withUnsafeBytes(of: sequence.littleEndian, Array.init) + [UInt8(truncatingIfNeeded: peripheral)]
            + [UInt8](repeating: 0xA5, count: max(0, padding))
    }
}
