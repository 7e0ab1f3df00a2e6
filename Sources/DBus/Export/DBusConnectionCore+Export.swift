#if canImport(Glibc)
import Glibc

/// Exported objects: the calls other connections make to them, and the standard interfaces
/// the connection answers for them (Introspectable, Properties, Peer, ObjectManager).
extension DBusConnectionCore {
    func export(_ interfaces: [DBusInterface], at path: DBusObjectPath) async throws(DBusError) {
        for interface in interfaces { try interface.validate() }
        let manager = try state.withLock { state throws(DBusError) -> DBusObjectPath? in
            if let reason = state.closeReason { throw reason }
            try state.objects.add(interfaces, at: path)
            return state.objects.manager(announcing: path)
        }
        guard let manager, !interfaces.isEmpty else { return }
        let added = await propertyValues(of: interfaces)
        try send(.signal(path: manager, interface: DBusConnection.objectManagerInterface, member: "InterfacesAdded",
                         body: [.objectPath(path), DBusValue(added)]))
    }

    func unexport(_ path: DBusObjectPath) throws(DBusError) {
        let (removed, manager) = state.withLock { state in
            (state.objects.remove(at: path), state.objects.manager(announcing: path))
        }
        guard let removed else { throw .invalidArgument("no object is exported at \(path)") }
        guard let manager, !removed.isEmpty else { return }
        try send(.signal(path: manager, interface: DBusConnection.objectManagerInterface, member: "InterfacesRemoved",
                         body: [.objectPath(path), DBusValue(removed.map(\.name))]))
    }

    func addObjectManager(at path: DBusObjectPath) throws(DBusError) {
        try state.withLock { state throws(DBusError) in
            if state.objects.interfaces(at: path) == nil { try state.objects.add([], at: path) }
            state.objects.addManager(at: path)
        }
    }

    /// A call to us (channel thread): answered in a task of its own, at most
    /// ``DBusConnection/Options/maximumConcurrentIncomingCalls`` at once. Calls that want no
    /// reply, from one sender to one object, are handled in the order they came: the sender
    /// cannot wait for each, so only this order keeps them in sequence (BlueZ sends a GATT
    /// application's writes without response that way). Calls that want a reply run side by
    /// side: a sender that needs them in order waits for each answer, and one that does not
    /// may cancel a call it is waiting for with another (an agent's `Cancel`).
    func handleIncomingCall(_ message: DBusMessage) {
        let accepted = state.withLock { state -> Bool in
            guard state.closeReason == nil, state.incomingCalls.count < options.maximumConcurrentIncomingCalls else { return false }
            let identifier = state.makeIdentifier()
            let chain = message.flags.contains(.noReplyExpected) ? "\(message.sender ?? "")|\(message.path.map { "\($0)" } ?? "")" : nil
            let previous = chain.flatMap { state.unansweredChains[$0]?.task }
            let task = Task { [self] in
                await previous?.value
                let reply = await answer(message)
                self.state.withLock { state in
                    _ = state.incomingCalls.removeValue(forKey: identifier)
                    if let chain, state.unansweredChains[chain]?.identifier == identifier { state.unansweredChains[chain] = nil }
                }
                guard !message.flags.contains(.noReplyExpected) else { return }
                do throws(DBusError) {
                    try send(reply)
                } catch {
                    logger.warning("cannot answer \(message.summary): \(error)")
                }
            }
            state.incomingCalls[identifier] = task
            if let chain { state.unansweredChains[chain] = (identifier, task) }
            return true
        }
        guard !accepted, closeReason == nil, !message.flags.contains(.noReplyExpected) else { return }
        _ = try? send(.error(to: message, name: .limitsExceeded,
                         message: "\(options.maximumConcurrentIncomingCalls) calls to this connection are being handled already"))
    }

    /// The answer to a call of ours: a method return or an error.
    func answer(_ message: DBusMessage) async -> DBusMessage {
        guard let path = message.path, let member = message.member else {
            return .error(to: message, name: .invalidArgs, message: "a method call needs a path and a member")
        }
        let signature = message.body.map(\.type)
        let (interfaces, isManager, hasNode, children) = state.withLock { state in
            (state.objects.interfaces(at: path), state.objects.isManager(path), state.objects.hasNode(at: path), state.objects.childNames(of: path))
        }
        func fail(_ name: DBusErrorName, _ text: String) -> DBusMessage { .error(to: message, name: name, message: text) }
        func expect(_ types: [DBusType]) -> DBusMessage? {
            signature == types ? nil : fail(.invalidArgs, "expected arguments \"\(Self.text(types))\", got \"\(Self.text(signature))\"")
        }

        switch (message.interface, member) {
        case (DBusConnection.peerInterface, "Ping"), (nil, "Ping"):
            return .methodReturn(to: message)
        case (DBusConnection.peerInterface, "GetMachineId"), (nil, "GetMachineId"):
            guard let machineID = Self.machineID() else { return fail(.failed, "this machine has no machine ID (/etc/machine-id)") }
            return .methodReturn(to: message, body: [.string(machineID)])
        case (DBusConnection.introspectableInterface, "Introspect"), (nil, "Introspect"):
            guard hasNode else { return fail(.unknownObject, "no object at \(path)") }
            return .methodReturn(to: message, body: [.string(DBusIntrospection.xml(interfaces: interfaces, isManager: isManager, children: children))])
        default:
            break
        }
        guard let interfaces else { return fail(.unknownObject, "no object at \(path)") }

        switch (message.interface, member) {
        case (DBusConnection.propertiesInterface, "Get"):
            if let mismatch = expect([.string, .string]) { return mismatch }
            let (interfaceName, name) = (message.body[0].stringValue ?? "", message.body[1].stringValue ?? "")
            switch property(name, of: interfaceName, in: interfaces) {
            case let .failure(error): return fail(error.name, error.message)
            case let .success(property):
                guard let get = property.get else { return fail(.invalidArgs, "property \(interfaceName).\(name) is write-only") }
                do {
                    let value = try await get()
                    guard value.type == property.type else {
                        return fail(.failed, "property \(interfaceName).\(name) has type \"\(property.type)\" but its getter gave \"\(value.type)\"")
                    }
                    return .methodReturn(to: message, body: [.variant(value)])
                } catch {
                    return errorReply(to: message, for: error)
                }
            }
        case (DBusConnection.propertiesInterface, "GetAll"):
            if let mismatch = expect([.string]) { return mismatch }
            let interfaceName = message.body[0].stringValue ?? ""
            if DBusObjectTree.standardInterfaces.contains(interfaceName) { return .methodReturn(to: message, body: [DBusValue([String: DBusValue]())]) }
            guard let interface = interfaces.first(where: { $0.name == interfaceName }) else {
                return fail(.unknownInterface, "no interface \(interfaceName) at \(path)")
            }
            return .methodReturn(to: message, body: [DBusValue(await propertyValues(of: interface))])
        case (DBusConnection.propertiesInterface, "Set"):
            if let mismatch = expect([.string, .string, .variant]) { return mismatch }
            let (interfaceName, name) = (message.body[0].stringValue ?? "", message.body[1].stringValue ?? "")
            let value = message.body[2].variantValue ?? message.body[2]
            switch property(name, of: interfaceName, in: interfaces) {
            case let .failure(error): return fail(error.name, error.message)
            case let .success(property):
                guard let set = property.set else { return fail(.propertyReadOnly, "property \(interfaceName).\(name) is read-only") }
                guard value.type == property.type else {
                    return fail(.invalidArgs, "property \(interfaceName).\(name) has type \"\(property.type)\", not \"\(value.type)\"")
                }
                do {
                    try await set(value)
                } catch {
                    return errorReply(to: message, for: error)
                }
                await announceChange(of: property, interface: interfaceName, at: path)
                return .methodReturn(to: message)
            }
        case (DBusConnection.objectManagerInterface, "GetManagedObjects") where isManager:
            if let mismatch = expect([]) { return mismatch }
            let objects = state.withLock { $0.objects.objects(below: path) }
            var result: [DBusObjectPath: [String: [String: DBusValue]]] = [:]
            for object in objects { result[object.path] = await propertyValues(of: object.interfaces) }
            return .methodReturn(to: message, body: [DBusValue(result)])
        default:
            break
        }

        let method: DBusMethod
        if let interfaceName = message.interface {
            guard let interface = interfaces.first(where: { $0.name == interfaceName }) else {
                return fail(.unknownInterface, "no interface \(interfaceName) at \(path)")
            }
            guard let found = interface.method(member) else { return fail(.unknownMethod, "no method \(member) in \(interfaceName)") }
            method = found
        } else {
            guard let found = interfaces.lazy.compactMap({ $0.method(member) }).first else {
                return fail(.unknownMethod, "no method \(member) at \(path)")
            }
            method = found
        }
        if let mismatch = expect(method.inputs.map(\.type)) { return mismatch }
        do {
            let outputs = try await method.handler(DBusMethodCall(message: message, path: path))
            let types = outputs.map(\.type)
            guard types == method.outputs.map(\.type) else {
                logger.error("the handler of \(message.summary) returned \"\(Self.text(types))\", not its declared \"\(Self.text(method.outputs.map(\.type)))\"")
                return fail(.failed, "the method's handler returned values of the wrong types")
            }
            return .methodReturn(to: message, body: outputs)
        } catch {
            return errorReply(to: message, for: error)
        }
    }

    private struct LookupError: Error {
        var name: DBusErrorName
        var message: String
    }

    private func property(_ name: String, of interfaceName: String, in interfaces: [DBusInterface]) -> Result<DBusProperty, LookupError> {
        guard let interface = interfaces.first(where: { $0.name == interfaceName }) else {
            return .failure(LookupError(name: .unknownInterface, message: "no interface \(interfaceName)"))
        }
        guard let property = interface.property(name) else {
            return .failure(LookupError(name: .unknownProperty, message: "no property \(name) in \(interfaceName)"))
        }
        return .success(property)
    }

    /// The error a handler threw, as the answer to `message`.
    private func errorReply(to message: DBusMessage, for error: any Error) -> DBusMessage {
        if case let DBusError.errorReply(name, text)? = error as? DBusError {
            guard name.isValid else {
                logger.warning("a handler threw the invalid error name \"\(name)\"; answering \(DBusErrorName.failed)")
                return .error(to: message, name: .failed, message: text)
            }
            return .error(to: message, name: name, message: text)
        }
        return .error(to: message, name: .failed, message: String(describing: error))
    }

    /// The readable properties of each interface, by interface name (for GetManagedObjects and
    /// InterfacesAdded). A getter that throws or gives the wrong type leaves its property out.
    func propertyValues(of interfaces: [DBusInterface]) async -> [String: [String: DBusValue]] {
        var result: [String: [String: DBusValue]] = [:]
        for interface in interfaces { result[interface.name] = await propertyValues(of: interface) }
        return result
    }

    func propertyValues(of interface: DBusInterface) async -> [String: DBusValue] {
        var values: [String: DBusValue] = [:]
        for property in interface.properties {
            guard let get = property.get else { continue }
            do {
                let value = try await get()
                guard value.type == property.type else {
                    logger.error("property \(interface.name).\(property.name) has type \"\(property.type)\" but its getter gave \"\(value.type)\"")
                    continue
                }
                values[property.name] = value
            } catch {
                logger.warning("property \(interface.name).\(property.name) could not be read: \(error)")
            }
        }
        return values
    }

    /// After a Set: PropertiesChanged with the value read back (or invalidated, if unreadable).
    private func announceChange(of property: DBusProperty, interface: String, at path: DBusObjectPath) async {
        var changed: [String: DBusValue] = [:]
        var invalidated: [String] = []
        if let get = property.get, let value = try? await get(), value.type == property.type {
            changed[property.name] = value
        } else {
            invalidated.append(property.name)
        }
        _ = try? send(.signal(path: path, interface: DBusConnection.propertiesInterface, member: "PropertiesChanged",
                          body: [.string(interface), DBusValue(changed), DBusValue(invalidated)]))
    }

    private static func text(_ types: [DBusType]) -> String { types.map(\.description).joined() }

    /// This machine's ID (Peer.GetMachineId): /etc/machine-id, else D-Bus's own copy.
    static func machineID() -> String? {
        for path in ["/etc/machine-id", "/var/lib/dbus/machine-id"] {
            let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { continue }
            defer { _ = Glibc.close(descriptor) }
            var bytes = [UInt8](repeating: 0, count: 64)
            let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count >= 32 else { continue }
            let identifier = String(decoding: bytes[..<32], as: UTF8.self)
            if identifier.utf8.allSatisfy(\.isHexDigit) { return identifier }
        }
        return nil
    }
}
#endif
