import BluetoothCore
import BluetoothTransport
import BluetoothVirtual
import Synchronization

/// The in-process virtual controllers that `virtual` and `virtual:NAME` name: simulated LE
/// controllers on one `BluetoothVirtual/VirtualLink` shared by the whole process, so that a
/// Bluejay and a peripheral made in the same program (or test) hear each other.
///
/// `virtual` is the controller named `bluejay`. Each name gets its own controller, made on
/// first use, with a public address derived from the name (`C0:B1:…`).
public enum InProcessRadio {
    private static let registry = Mutex<[String: VirtualController]>([:])

    /// The shared link (made on first use).
    public static let link = VirtualLink()

    /// The controller `name` names, made on first use.
    public static func controller(named name: String) -> VirtualController {
        registry.withLock { controllers in
            if let existing = controllers[name] { return existing }
            let controller = link.addController(name: name, address: address(for: name))
            controllers[name] = controller
            return controller
        }
    }

    /// A new transport to the controller `name` names (`nil`: `bluejay`), as the transport
    /// strings `virtual` and `virtual:NAME` open it (the CLI's `--hci virtual` too).
    public static func openTransport(name: String?) throws(BluejayError) -> any HCITransport {
        controller(named: name ?? "bluejay").makeTransport()
    }

    /// `C0:B1` then four bytes of the name's FNV-1a hash.
    static func address(for name: String) -> BluetoothAddress {
        var hash: UInt32 = 2_166_136_261
        for byte in name.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        let bytes: [UInt8] = [0xC0, 0xB1, UInt8(hash >> 24), UInt8((hash >> 16) & 0xFF), UInt8((hash >> 8) & 0xFF), UInt8(hash & 0xFF)]
        return BluetoothAddress(bytes: bytes) ?? .zero
    }
}
