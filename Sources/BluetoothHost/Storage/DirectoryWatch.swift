#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Tells a store which files of its directory changed since it last asked, whoever changed
/// them (this process or another), so that it can keep a copy in memory and read again only
/// what changed. On Linux, one inotify instance serves the whole process (they are few: 128
/// per user by default); each watch takes the events of its directory. Asking costs one
/// non-blocking `read(2)` when nothing happened. Elsewhere, or when inotify cannot be had,
/// there is no watch and the store reads the disk on each call.
final class DirectoryWatch: Sendable {
    /// What changed since the last ``takeChanges()``.
    enum Changes: Sendable, Equatable {
        case none
        /// These names in the directory were created, written, renamed, removed or changed mode.
        case files(Set<String>)
        /// Events were lost (the kernel's queue overflowed), or the directory itself was
        /// removed or moved (the watch is then over): read everything again.
        case everything
    }

    private let id: UInt64
    /// Whether the directory itself went away: the watch reports nothing more.
    var isOver: Bool { DirectoryWatch.hub.withLock { $0.watches[id] == nil } }

    private init(id: UInt64) { self.id = id }

    deinit {
        DirectoryWatch.hub.withLock { $0.remove(id) }
    }

    /// Starts watching `directory` (which must exist); `nil` when it cannot be watched.
    static func watch(_ directory: String) -> DirectoryWatch? {
        #if os(Linux)
        let id = hub.withLock { $0.add(directory) }
        return id.map(DirectoryWatch.init(id:))
        #else
        return nil
        #endif
    }

    /// The changes since the last call (or since the watch began).
    func takeChanges() -> Changes {
        DirectoryWatch.hub.withLock { hub in
            hub.drain()
            return hub.take(id)
        }
    }

    // MARK: The process's inotify instance

    private static let hub = Mutex(Hub())

    private struct Hub: Sendable {
        struct Watch: Sendable {
            var descriptor: Int32
            var changes: Changes = .none
        }

        /// The inotify instance; `nil` until first needed, or when it cannot be made.
        var instance: Int32?
        var watches: [UInt64: Watch] = [:]
        var nextID: UInt64 = 0

        #if os(Linux)
        /// The events of every directory: created, written and closed, renamed in or out,
        /// removed, mode changed; the directory itself removed or moved.
        static let mask = UInt32(IN_CREATE | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_ATTRIB
            | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
        #endif

        mutating func add(_ directory: String) -> UInt64? {
            #if os(Linux)
            if instance == nil {
                let made = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
                guard made >= 0 else { return nil }
                instance = made
            }
            guard let instance else { return nil }
            let descriptor = inotify_add_watch(instance, directory, Self.mask)
            guard descriptor >= 0 else { return nil }
            // Events already queued for this descriptor belong to earlier watches.
            drain()
            nextID += 1
            watches[nextID] = Watch(descriptor: descriptor)
            return nextID
            #else
            return nil
            #endif
        }

        mutating func remove(_ id: UInt64) {
            #if os(Linux)
            guard let watch = watches.removeValue(forKey: id), let instance else { return }
            // Another watch of the same directory shares the kernel's descriptor.
            if !watches.values.contains(where: { $0.descriptor == watch.descriptor }) {
                _ = inotify_rm_watch(instance, watch.descriptor)
            }
            #endif
        }

        mutating func take(_ id: UInt64) -> Changes {
            guard let watch = watches[id] else { return .everything }
            watches[id]?.changes = .none
            return watch.changes
        }

        /// Reads every event queued, without waiting, and files it under its watches.
        mutating func drain() {
            #if os(Linux)
            guard let instance else { return }
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(instance, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return }
                var offset = 0
                let header = MemoryLayout<inotify_event>.size
                while offset + header <= count {
                    let (descriptor, mask, length) = buffer.withUnsafeBytes { raw in
                        let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                        return (event.wd, event.mask, Int(event.len))
                    }
                    let nameBytes = buffer[(offset + header)..<min(count, offset + header + length)].prefix { $0 != 0 }
                    note(descriptor: descriptor, mask: mask, name: String(decoding: nameBytes, as: UTF8.self))
                    offset += header + length
                }
            }
            #endif
        }

        #if os(Linux)
        private mutating func note(descriptor: Int32, mask: UInt32, name: String) {
            if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                for id in watches.keys { watches[id]?.changes = .everything }
                return
            }
            let over = mask & UInt32(IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF) != 0
            for (id, watch) in watches where watch.descriptor == descriptor {
                if over {
                    watches[id] = nil
                    continue
                }
                switch watch.changes {
                case .everything: break
                case .none: watches[id]?.changes = .files([name])
                case var .files(names):
                    names.insert(name)
                    watches[id]?.changes = .files(names)
                }
            }
        }
        #endif
    }
}
