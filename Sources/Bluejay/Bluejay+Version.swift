extension Bluejay {
    /// This release of Bluejay (what `bluejay --version` prints): the one place it is written.
    public static let version = "0.13.0"
}
