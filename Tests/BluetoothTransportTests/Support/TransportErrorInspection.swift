import BluetoothTransport

extension TransportError {
    /// The errno and hint of an `.openFailed`, `nil` for any other case.
    var openFailure: (errno: Int32, hint: String)? {
        if case let .openFailed(_, code, hint) = self { return (code, hint) }
        return nil
    }

    /// The reason of an `.invalidSpecification`, `nil` for any other case.
    var invalidSpecificationReason: String? {
        if case let .invalidSpecification(_, reason) = self { return reason }
        return nil
    }
}
