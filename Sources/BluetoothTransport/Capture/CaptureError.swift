/// Why a capture file could not be opened or written.
public enum CaptureError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file exists and the mode was ``HCICapture/FileMode/createNew``.
    case fileExists(String)
    /// The file exists but is not a btsnoop H4 capture, so it cannot be appended to.
    case notACapture(String, reason: String)
    /// The path is not a file a capture may write: a symbolic link (never followed), not a
    /// regular file, another user's, or a file with several names (hard links).
    case unsafeFile(String, reason: String)
    /// The operating system refused to open or write the file.
    case systemError(String, errno: Int32)

    public var description: String {
        switch self {
        case let .fileExists(path):
            return "the capture file \(path) already exists (append to it or replace it explicitly)"
        case let .notACapture(path, reason):
            return "cannot append to \(path): \(reason)"
        case let .unsafeFile(path, reason):
            return "refusing to write the capture file \(path): \(reason)"
        case let .systemError(path, errno):
            return "cannot write the capture file \(path): \(SystemError.message(errno))"
        }
    }
}
