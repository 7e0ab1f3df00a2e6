/// Receives Bluejay's log lines (queue, connection and reconnection decisions) in addition
/// to swift-log. Called on the callback queue; held weakly.
public protocol LogObserver: AnyObject, Sendable {
    func debug(_ text: String)
}
