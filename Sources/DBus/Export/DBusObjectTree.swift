/// The objects a connection exports, by path, and the object managers among them: plain
/// state, no I/O, looked up for each incoming call.
struct DBusObjectTree {
    private(set) var objects: [DBusObjectPath: [DBusInterface]] = [:]
    private(set) var managers: Set<DBusObjectPath> = []

    func interfaces(at path: DBusObjectPath) -> [DBusInterface]? { objects[path] }

    func isManager(_ path: DBusObjectPath) -> Bool { managers.contains(path) }

    mutating func add(_ interfaces: [DBusInterface], at path: DBusObjectPath) throws(DBusError) {
        guard objects[path] == nil else { throw .invalidArgument("an object is already exported at \(path)") }
        let names = interfaces.map(\.name)
        guard Set(names).count == names.count else { throw .invalidArgument("an interface appears twice at \(path)") }
        if let standard = names.first(where: Self.standardInterfaces.contains) {
            throw .invalidArgument("\(standard) at \(path) is answered by the connection itself")
        }
        objects[path] = interfaces
    }

    mutating func remove(at path: DBusObjectPath) -> [DBusInterface]? {
        managers.remove(path)
        return objects.removeValue(forKey: path)
    }

    mutating func addManager(at path: DBusObjectPath) {
        managers.insert(path)
    }

    /// The nearest object manager at or above `path`'s parent, which announces `path`.
    func manager(announcing path: DBusObjectPath) -> DBusObjectPath? {
        var current = path.parent
        while let candidate = current {
            if managers.contains(candidate) { return candidate }
            current = candidate.parent
        }
        return nil
    }

    /// Every object strictly below `root`, sorted by path.
    func objects(below root: DBusObjectPath) -> [(path: DBusObjectPath, interfaces: [DBusInterface])] {
        objects.filter { $0.key != root && $0.key.isWithin(root) }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// Whether anything is exported at or below `path` (so Introspect answers there).
    func hasNode(at path: DBusObjectPath) -> Bool {
        objects[path] != nil || managers.contains(path) || objects.keys.contains { $0.isWithin(path) }
    }

    /// The names of the nodes one level below `path` that lead to exported objects.
    func childNames(of path: DBusObjectPath) -> [String] {
        let depth = path.elements.count
        var names: Set<String> = []
        for objectPath in objects.keys where objectPath != path && objectPath.isWithin(path) {
            let elements = objectPath.elements
            if elements.count > depth { names.insert(String(elements[depth])) }
        }
        return names.sorted()
    }

    static let standardInterfaces: Set<String> = [
        "org.freedesktop.DBus.Properties", "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Peer",
        "org.freedesktop.DBus.ObjectManager",
    ]
}
