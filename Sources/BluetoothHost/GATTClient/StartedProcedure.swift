/// How a procedure started without a task goes on (the callback API's reads): finished at
/// once, on the thread that received its response, or with what is left to do, which the
/// caller runs in a task of its own.
public enum StartedProcedure<Value: Sendable>: Sendable {
    /// Done, with its value.
    case finished(Value)
    /// The rest of the procedure (more requests, or the error to throw), to run in a task.
    case unfinished(@Sendable () async throws -> Value)

    /// The same procedure, its value (when it has one) made into another.
    public func map<Other: Sendable>(_ transform: @escaping @Sendable (Value) -> Other) -> StartedProcedure<Other> {
        switch self {
        case let .finished(value): return .finished(transform(value))
        case let .unfinished(rest): return .unfinished { transform(try await rest()) }
        }
    }
}
