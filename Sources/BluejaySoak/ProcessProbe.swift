import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The process's resources, read from `/proc/self` (Linux).
struct ProcessSample: Sendable, CustomStringConvertible {
    /// Resident set size (VmRSS), in KiB.
    var rssKiB: Int
    /// What the program has allocated from malloc and not freed, in KiB (from glibc's
    /// `malloc_info`: the arenas' memory less their free chunks, plus mmapped chunks): what
    /// the RSS is made of, without fragmentation and without the stacks and code.
    var heapInUseKiB: Int?
    /// Open file descriptors (entries of /proc/self/fd, less the one reading it).
    var fileDescriptors: Int { descriptors.count }
    /// What each open descriptor is (its /proc/self/fd link: a path, `pipe:[…]`,
    /// `anon_inode:[eventfd]`, …), by number.
    var descriptors: [Int: String]
    /// Threads of the process (Threads in /proc/self/status), for information: dispatch
    /// keeps idle worker threads for a while, so they are not an invariant.
    var threads: Int

    var description: String {
        "RSS \(Self.mebibytes(rssKiB)), heap in use \(heapInUseKiB.map(Self.mebibytes) ?? "?"), \(fileDescriptors) fds, \(threads) threads"
    }

    static func mebibytes(_ kib: Int) -> String {
        String(format: "%.1f MiB", Double(kib) / 1024)
    }
}

enum ProcessProbe {
    /// Hands the allocator's free memory back to the system, then samples: the RSS then
    /// counts live memory and fragmentation, not what glibc keeps for later.
    static func sample() -> ProcessSample {
        trimAllocator()
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        return ProcessSample(rssKiB: field("VmRSS", in: status) ?? -1, heapInUseKiB: heapInUse(), descriptors: openFileDescriptors(),
                             threads: field("Threads", in: status) ?? -1)
    }

    /// glibc's `malloc_trim(0)`, looked up at run time (the Glibc module does not export it).
    private static func trimAllocator() {
        #if canImport(Glibc)
        typealias Trim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: Trim.self)(0)
        #endif
    }

    /// Bytes allocated and not freed, from the totals of `malloc_info(0, …)` (its XML ends
    /// with the totals over every arena): system current − fast − rest + mmap.
    static func heapInUse() -> Int? {
        #if canImport(Glibc)
        typealias Info = @convention(c) (Int32, UnsafeMutablePointer<FILE>?) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_info") else { return nil }
        var buffer: UnsafeMutablePointer<CChar>?
        var length = 0
        guard let stream = open_memstream(&buffer, &length) else { return nil }
        let status = unsafeBitCast(symbol, to: Info.self)(0, stream)
        fclose(stream)
        defer { free(buffer) }
        guard status == 0, let buffer else { return nil }
        let text = String(cString: buffer)
        guard let end = text.range(of: "</heap>", options: .backwards) else { return nil }
        let totals = text[end.upperBound...]
        func amount(_ tag: String, _ type: String) -> Int? {
            guard let line = totals.split(separator: "\n").first(where: { $0.contains("<\(tag) type=\"\(type)\"") }),
                  let range = line.range(of: "size=\"") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        guard let current = amount("system", "current"), let fast = amount("total", "fast"), let rest = amount("total", "rest") else { return nil }
        return (current - fast - rest + (amount("total", "mmap") ?? 0)) / 1024
        #else
        return nil
        #endif
    }

    /// The number of a `Name:   123 kB` line of /proc/self/status.
    static func field(_ name: String, in status: String) -> Int? {
        for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
            let number = line.dropFirst(name.count + 1).split(whereSeparator: \.isWhitespace).first
            return number.flatMap { Int($0) }
        }
        return nil
    }

    /// The entries of /proc/self/fd and what they link to. Listing the directory opens one
    /// descriptor, which is left out (it no longer resolves once the listing is done).
    static func openFileDescriptors() -> [Int: String] {
        let directory = "/proc/self/fd"
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [:] }
        var descriptors: [Int: String] = [:]
        for entry in entries {
            guard let number = Int(entry),
                  let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(entry)") else { continue }
            descriptors[number] = target
        }
        return descriptors
    }
}
