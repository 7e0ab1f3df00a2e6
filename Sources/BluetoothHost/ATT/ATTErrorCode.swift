import BluetoothCore
/// An ATT Error Code (Core 6.0, Vol 3, Part F, 3.4.1.1, Table 3.4), including the
/// application range and the common profile and service error codes (Core Specification
/// Supplement, Part B, 1).
///
/// A client that receives a code it does not understand still treats the request as failed
/// for an unknown reason (Vol 3, Part F, 3.4.1.1), so any raw value is representable.
public struct ATTErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible, Codable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let invalidHandle = ATTErrorCode(rawValue: 0x01)
    public static let readNotPermitted = ATTErrorCode(rawValue: 0x02)
    public static let writeNotPermitted = ATTErrorCode(rawValue: 0x03)
    public static let invalidPDU = ATTErrorCode(rawValue: 0x04)
    public static let insufficientAuthentication = ATTErrorCode(rawValue: 0x05)
    public static let requestNotSupported = ATTErrorCode(rawValue: 0x06)
    public static let invalidOffset = ATTErrorCode(rawValue: 0x07)
    public static let insufficientAuthorization = ATTErrorCode(rawValue: 0x08)
    public static let prepareQueueFull = ATTErrorCode(rawValue: 0x09)
    public static let attributeNotFound = ATTErrorCode(rawValue: 0x0A)
    public static let attributeNotLong = ATTErrorCode(rawValue: 0x0B)
    /// Previously "Insufficient Encryption Key Size".
    public static let encryptionKeySizeTooShort = ATTErrorCode(rawValue: 0x0C)
    public static let invalidAttributeValueLength = ATTErrorCode(rawValue: 0x0D)
    public static let unlikelyError = ATTErrorCode(rawValue: 0x0E)
    public static let insufficientEncryption = ATTErrorCode(rawValue: 0x0F)
    public static let unsupportedGroupType = ATTErrorCode(rawValue: 0x10)
    public static let insufficientResources = ATTErrorCode(rawValue: 0x11)
    public static let databaseOutOfSync = ATTErrorCode(rawValue: 0x12)
    public static let valueNotAllowed = ATTErrorCode(rawValue: 0x13)
    /// Common profile and service error (Core Specification Supplement, Part B).
    public static let writeRequestRejected = ATTErrorCode(rawValue: 0xFC)
    /// Common profile and service error (Core Specification Supplement, Part B).
    public static let cccdImproperlyConfigured = ATTErrorCode(rawValue: 0xFD)
    /// Common profile and service error (Core Specification Supplement, Part B).
    public static let procedureAlreadyInProgress = ATTErrorCode(rawValue: 0xFE)
    /// Common profile and service error (Core Specification Supplement, Part B).
    public static let outOfRange = ATTErrorCode(rawValue: 0xFF)

    /// Application error codes, defined by a higher layer specification.
    public static let applicationErrorRange: ClosedRange<UInt8> = 0x80...0x9F
    /// Common profile and service error codes (CSS Part B).
    public static let commonProfileErrorRange: ClosedRange<UInt8> = 0xE0...0xFF

    /// An application error 0x80…0x9F; `nil` outside that range.
    public static func application(_ rawValue: UInt8) -> ATTErrorCode? {
        applicationErrorRange.contains(rawValue) ? ATTErrorCode(rawValue: rawValue) : nil
    }

    public var isApplicationError: Bool { Self.applicationErrorRange.contains(rawValue) }
    public var isCommonProfileError: Bool { Self.commonProfileErrorRange.contains(rawValue) }

    /// The specification's name for the code.
    public var name: String {
        if let name = Self.names[rawValue] { return name }
        if isApplicationError { return "Application Error" }
        if isCommonProfileError { return "Common Profile and Service Error" }
        return "Reserved Error"
    }

    /// `"Read Not Permitted (0x02)"`.
    public var description: String { "\(name) (\(Hex.format(rawValue, digits: 2)))" }

    private static let names: [UInt8: String] = [
        0x01: "Invalid Handle", 0x02: "Read Not Permitted", 0x03: "Write Not Permitted", 0x04: "Invalid PDU",
        0x05: "Insufficient Authentication", 0x06: "Request Not Supported", 0x07: "Invalid Offset",
        0x08: "Insufficient Authorization", 0x09: "Prepare Queue Full", 0x0A: "Attribute Not Found",
        0x0B: "Attribute Not Long", 0x0C: "Encryption Key Size Too Short", 0x0D: "Invalid Attribute Value Length",
        0x0E: "Unlikely Error", 0x0F: "Insufficient Encryption", 0x10: "Unsupported Group Type",
        0x11: "Insufficient Resources", 0x12: "Database Out Of Sync", 0x13: "Value Not Allowed",
        0xFC: "Write Request Rejected",
        0xFD: "Client Characteristic Configuration Descriptor Improperly Configured",
        0xFE: "Procedure Already in Progress", 0xFF: "Out of Range",
    ]
}
