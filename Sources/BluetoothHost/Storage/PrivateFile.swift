import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Small files only their user may read (bonds, Bluejay's restoration state), written and
/// read back without trusting what is on disk: a `0700` directory, `0600` files written
/// atomically, and on reading, no symbolic links, FIFOs, other users' files or oversize files.
/// A file that cannot be trusted is set aside (`<name>.corrupt-<UTC time>`) by the store that
/// reads it. Used by ``FileBondStore`` and Bluejay's `RestorationStore`.
package enum PrivateFile {
    /// Why a directory or a file could not be prepared or written.
    package struct Failure: Error, Sendable {
        package let reason: String
    }

    /// What ``contents(of:maximumSize:open:)`` found.
    package enum Contents: Sendable {
        /// No file.
        case missing
        case bytes([UInt8])
        /// There is a file, but it cannot be trusted, whenever it is read: why. The store sets
        /// it aside.
        case untrusted(String)
        /// There is a file, but the system cannot read it now (out of file descriptors or
        /// memory, an I/O error, no permission): why. It may be good: the store keeps it and
        /// reports the failure.
        case unreadable(String)
    }

    /// How a file is opened: `open(2)`, or a stand-in that fails as the system may (tests).
    package typealias Opener = @Sendable (_ path: String, _ flags: Int32) -> Int32

    /// `open(2)`.
    package static let systemOpen: Opener = { path, flags in open(path, flags) }

    /// The file's bytes, if it is a regular file of this user of at most `maximumSize` bytes.
    /// It is opened without following a symbolic link or waiting on a FIFO put in its place,
    /// and made `0600` if someone made it readable to others since. A failure of the system
    /// (the open, fstat or read failing for another reason than what the file is) is
    /// ``Contents/unreadable(_:)``, never ``Contents/untrusted(_:)``.
    package static func contents(of path: String, maximumSize: Int, open: Opener = systemOpen) -> Contents {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let error = errno
            switch error {
            case ENOENT: return .missing
            case ELOOP: return .untrusted("a symbolic link")
            // A socket, or a device with nothing behind it: not a file this store wrote.
            case ENXIO, ENODEV, EISDIR: return .untrusted("not a regular file")
            default: return .unreadable("cannot be opened: \(describe(error))")
            }
        }
        defer { _ = close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return .unreadable("cannot be looked at: \(describe(errno))") }
        guard status.st_mode & S_IFMT == S_IFREG else { return .untrusted("not a regular file") }
        guard status.st_uid == geteuid() else { return .untrusted("owned by user \(status.st_uid), not \(geteuid())") }
        guard Int(status.st_size) <= maximumSize else { return .untrusted("\(status.st_size) bytes, more than \(maximumSize)") }
        if status.st_mode & 0o077 != 0 { _ = fchmod(descriptor, 0o600) }
        // Read to the end, but never more than the limit (the file may have grown since fstat).
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return .bytes(bytes) }
            if count < 0 {
                if errno == EINTR { continue }
                return .unreadable("cannot be read: \(describe(errno))")
            }
            guard bytes.count + count <= maximumSize else { return .untrusted("more than \(maximumSize) bytes") }
            bytes += chunk.prefix(count)
        }
    }

    /// Renames the file aside, `<path>.corrupt-<UTC time>` (with a number if that exists), and
    /// returns where it went; `nil` if it could only be removed.
    package static func setAside(_ path: String) -> String? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withYear, .withMonth, .withDay, .withTime, .withTimeZone]
        let base = path + ".corrupt-" + formatter.string(from: Date())
        for attempt in 0..<100 {
            let target = attempt == 0 ? base : "\(base)-\(attempt)"
            // link(2) then unlink(2): never replaces a file set aside earlier, as rename(2) would.
            if link(path, target) == 0 {
                _ = unlink(path)
                return target
            }
            guard errno == EEXIST else { break }
        }
        // Cannot keep it (no hard links here, or no room): at least never read it again.
        if rename(path, base) == 0 { return base }
        _ = unlink(path)
        return nil
    }

    /// Creates the directory `0700` (and its missing parents); tightens an existing one of this
    /// user to `0700`; refuses one of another user (they could read or replace the files).
    package static func prepareDirectory(_ path: String) throws(Failure) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw Failure(reason: "cannot create \(path): \(error)")
        }
        var status = stat()
        guard stat(path, &status) == 0 else { throw Failure(reason: "cannot look at \(path): \(describe(errno))") }
        guard status.st_uid == geteuid() else {
            throw Failure(reason: "\(path) belongs to user \(status.st_uid), not \(geteuid()): nothing private is written there")
        }
        if status.st_mode & 0o077 != 0, chmod(path, 0o700) != 0 {
            throw Failure(reason: "cannot make \(path) private (0700): \(describe(errno))")
        }
    }

    /// Writes a new file `0600` next to `path`, flushes it and renames it over `path`: a
    /// reader sees the old contents or the new, never part of them.
    package static func writeAtomically(_ data: Data, to path: String) throws(Failure) {
        let temporary = path + ".new-\(getpid())"
        _ = unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Failure(reason: "cannot create \(temporary): \(describe(errno))") }
        var failure: String?
        // The umask may only remove bits; this makes the mode exactly 0600 whatever it is.
        if fchmod(descriptor, 0o600) != 0 { failure = "chmod: \(describe(errno))" }
        data.withUnsafeBytes { buffer in
            var offset = 0
            while failure == nil, offset < buffer.count, let base = buffer.baseAddress {
                let written = write(descriptor, base + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0, errno == EINTR {
                    continue
                } else {
                    failure = "write: \(describe(errno))"
                }
            }
        }
        if failure == nil, fsync(descriptor) != 0 { failure = "fsync: \(describe(errno))" }
        if close(descriptor) != 0, failure == nil { failure = "close: \(describe(errno))" }
        if failure == nil, rename(temporary, path) != 0 { failure = "rename: \(describe(errno))" }
        if let failure {
            _ = unlink(temporary)
            throw Failure(reason: "cannot write \(path): \(failure)")
        }
    }

    /// `strerror`'s text.
    package static func describe(_ error: Int32) -> String { String(cString: strerror(error)) }
}
