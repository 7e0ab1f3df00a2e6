/// One listener of a characteristic, as ``Bluejay/listen(to:multipleListenOption:completion:)``
/// returns it: ``Bluejay/endListen(_:completion:)`` ends that listener alone, leaving the
/// others that share the characteristic (``MultipleListenOption/shared``).
public struct ListenToken: Sendable, Hashable, CustomStringConvertible {
    /// The characteristic listened to.
    public let characteristic: CharacteristicIdentifier
    /// Which listener of it (never reused while Bluejay runs); 0 for a listen that was refused.
    let id: UInt64

    public var description: String { "listener \(id) of \(characteristic)" }
}
