#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Text for operating-system error numbers.
enum SystemError {
    static func message(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return "\(String(cString: text)) (errno \(code))"
    }
}
