/// The signals that match one rule, as they arrive. The rule stays on the bus while the stream
/// lives and is removed when its consumer stops (the task is cancelled or the stream is
/// dropped). When the connection closes, iteration ends by throwing
/// ``DBusError/connectionClosed(reason:)``.
///
/// A consumer that falls behind loses the oldest signals beyond the connection's
/// ``DBusConnection/Options/signalBufferLimit`` (logged once per stream).
public struct DBusSignalStream: AsyncSequence, Sendable {
    public typealias Element = DBusMessage
    public typealias Failure = DBusError

    let base: AsyncThrowingStream<DBusMessage, any Error>

    init(_ base: AsyncThrowingStream<DBusMessage, any Error>) {
        self.base = base
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator())
    }

    /// Iterates the signals; throws ``DBusError/connectionClosed(reason:)`` when the connection closes.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<DBusMessage, any Error>.AsyncIterator

        public mutating func next() async throws(DBusError) -> DBusMessage? {
            do {
                return try await base.next()
            } catch let error as DBusError {
                throw error
            } catch {
                throw .cancelled
            }
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(DBusError) -> DBusMessage? {
            do {
                return try await base.next(isolation: actor)
            } catch let error as DBusError {
                throw error
            } catch {
                throw .cancelled
            }
        }
    }
}

/// Signals decoded into a Swift value each: ``DBusInterfacesAdded``, ``DBusInterfacesRemoved``,
/// ``DBusPropertiesChanged``. A signal whose arguments do not decode is skipped.
public struct DBusSignals<Element: Sendable>: AsyncSequence, Sendable {
    public typealias Failure = DBusError

    let signals: DBusSignalStream
    let decode: @Sendable (DBusMessage) -> Element?

    /// The signals of `signals` that `decode` turns into an element (the others are skipped).
    public init(_ signals: DBusSignalStream, decode: @escaping @Sendable (DBusMessage) -> Element?) {
        self.signals = signals
        self.decode = decode
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: signals.makeAsyncIterator(), decode: decode)
    }

    /// Iterates the decoded signals.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: DBusSignalStream.AsyncIterator
        let decode: @Sendable (DBusMessage) -> Element?

        public mutating func next() async throws(DBusError) -> Element? {
            while let message = try await base.next() {
                if let element = decode(message) { return element }
            }
            return nil
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(DBusError) -> Element? {
            while let message = try await base.next(isolation: actor) {
                if let element = decode(message) { return element }
            }
            return nil
        }
    }
}

/// `org.freedesktop.DBus.ObjectManager.InterfacesAdded`: an object appeared, or got interfaces.
public struct DBusInterfacesAdded: Sendable, Equatable {
    /// The object manager that sent it.
    public var manager: DBusObjectPath
    /// The object that appeared.
    public var path: DBusObjectPath
    /// Interface name to its properties.
    public var interfaces: [String: [String: DBusValue]]
    /// The sender's unique name.
    public var sender: String?

    init?(_ message: DBusMessage) {
        guard let manager = message.path,
              let (path, interfaces) = try? message.decode(DBusObjectPath.self, [String: [String: DBusValue]].self) else { return nil }
        self.manager = manager
        self.path = path
        self.interfaces = interfaces
        sender = message.sender
    }
}

/// `org.freedesktop.DBus.ObjectManager.InterfacesRemoved`: an object lost interfaces (all of
/// them when it went away).
public struct DBusInterfacesRemoved: Sendable, Equatable {
    /// The object manager that sent it.
    public var manager: DBusObjectPath
    /// The object that lost interfaces.
    public var path: DBusObjectPath
    /// The interfaces it lost.
    public var interfaces: [String]
    /// The sender's unique name.
    public var sender: String?

    init?(_ message: DBusMessage) {
        guard let manager = message.path, let (path, interfaces) = try? message.decode(DBusObjectPath.self, [String].self) else { return nil }
        self.manager = manager
        self.path = path
        self.interfaces = interfaces
        sender = message.sender
    }
}

/// `org.freedesktop.DBus.Properties.PropertiesChanged`: new values of some properties of one
/// interface, and the names of those that changed without their value being sent.
public struct DBusPropertiesChanged: Sendable, Equatable {
    /// The object whose properties changed.
    public var path: DBusObjectPath
    /// The interface the properties belong to.
    public var interface: String
    /// The new values.
    public var changed: [String: DBusValue]
    /// Properties that changed without their new value.
    public var invalidated: [String]
    /// The sender's unique name.
    public var sender: String?

    init?(_ message: DBusMessage) {
        guard let path = message.path,
              let (interface, changed, invalidated) = try? message.decode(String.self, [String: DBusValue].self, [String].self) else { return nil }
        self.path = path
        self.interface = interface
        self.changed = changed
        self.invalidated = invalidated
        sender = message.sender
    }
}
