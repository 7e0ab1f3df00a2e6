import Logging

/// A logger that says nothing: the code under test logs every malformed PDU, and a fuzzer
/// feeds it little else.
public let fuzzLogger = Logger(label: "bluejay.fuzz", factory: { _ in SwiftLogNoOpLogHandler() })
