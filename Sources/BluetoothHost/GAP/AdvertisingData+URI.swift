import BluetoothCore

/// The URI AD type (Core Specification Supplement, Part A, 1.18): the scheme is replaced by
/// one code point from the URI Scheme Name String Mapping (Assigned Numbers, 2.7), written
/// as a UTF-8 character, followed by the rest of the URI. Code point 0x01 means "no scheme
/// in the table": the URI follows written out in full.
enum AdvertisingURI {
    /// The code point for "no mapped scheme".
    static let emptySchemeCodePoint: UInt32 = 0x01

    /// Assigned Numbers 2.7, code points 0x02 and up, in order.
    static let schemes: [String] = [
        "aaa:", "aaas:", "about:", "acap:", "acct:", "cap:", "cid:", "coap:", "coaps:", "crid:", "data:", "dav:",
        "dict:", "dns:", "file:", "ftp:", "geo:", "go:", "gopher:", "h323:", "http:", "https:", "iax:", "icap:",
        "im:", "imap:", "info:", "ipp:", "ipps:", "iris:", "iris.beep:", "iris.xpc:", "iris.xpcs:", "iris.lwz:",
        "jabber:", "ldap:", "mailto:", "mid:", "msrp:", "msrps:", "mtqp:", "mupdate:", "news:", "nfs:", "ni:",
        "nih:", "nntp:", "opaquelocktoken:", "pop:", "pres:", "reload:", "rtsp:", "rtsps:", "rtspu:", "service:",
        "session:", "shttp:", "sieve:", "sip:", "sips:", "sms:", "snmp:", "soap.beep:", "soap.beeps:", "stun:",
        "stuns:", "tag:", "tel:", "telnet:", "tftp:", "thismessage:", "tn3270:", "tip:", "turn:", "turns:", "tv:",
        "urn:", "vemmi:", "ws:", "wss:", "xcon:", "xcon-userid:", "xmlrpc.beep:", "xmlrpc.beeps:", "xmpp:",
        "z39.50r:", "z39.50s:", "acr:", "adiumxtra:", "afp:", "afs:", "aim:", "apt:", "attachment:", "aw:",
        "barion:", "beshare:", "bitcoin:", "bolo:", "callto:", "chrome:", "chrome-extension:",
        "com-eventbrite-attendee:", "content:", "cvs:", "dlna-playsingle:", "dlna-playcontainer:", "dtn:", "dvb:",
        "ed2k:", "facetime:", "feed:", "feedready:", "finger:", "fish:", "gg:", "git:", "gizmoproject:", "gtalk:",
        "ham:", "hcp:", "icon:", "ipn:", "irc:", "irc6:", "ircs:", "itms:", "jar:", "jms:", "keyparc:", "lastfm:",
        "ldaps:", "magnet:", "maps:", "market:", "message:", "mms:", "ms-help:", "ms-settings-power:", "msnim:",
        "mumble:", "mvn:", "notes:", "oid:", "palm:", "paparazzi:", "pkcs11:", "platform:", "proxy:", "psyc:",
        "query:", "res:", "resource:", "rmi:", "rsync:", "rtmfp:", "rtmp:", "secondlife:", "sftp:", "sgn:",
        "skype:", "smb:", "smtp:", "soldat:", "spotify:", "ssh:", "steam:", "submit:", "svn:", "teamspeak:",
        "teliaeid:", "things:", "udp:", "unreal:", "ut2004:", "ventrilo:", "view-source:", "webcal:", "wtai:",
        "wyciwyg:", "xfire:", "xri:", "ymsgr:", "example:", "ms-settings-cloudstorage:", "bluetooth:", "bl:",
    ]

    /// The scheme for a code point, `""` for 0x01, `nil` if unassigned.
    static func scheme(forCodePoint codePoint: UInt32) -> String? {
        if codePoint == emptySchemeCodePoint { return "" }
        guard codePoint >= 2, Int(codePoint - 2) < schemes.count else { return nil }
        return schemes[Int(codePoint - 2)]
    }

    /// The encoded URI: the code point of the longest matching scheme, then the rest.
    static func encode(_ uri: String) -> [UInt8] {
        let lowered = uri.lowercased()
        var best: (codePoint: UInt32, length: Int)?
        for (index, scheme) in schemes.enumerated() where lowered.hasPrefix(scheme) {
            if scheme.count > (best?.length ?? 0) { best = (UInt32(index + 2), scheme.count) }
        }
        guard let best, let scalar = Unicode.Scalar(best.codePoint) else {
            return [UInt8(emptySchemeCodePoint)] + Array(uri.utf8)
        }
        return Array(String(Character(scalar)).utf8) + Array(uri.dropFirst(best.length).utf8)
    }

    /// Decodes URI data; throws for invalid UTF-8, empty data or an unassigned code point.
    static func decode(_ bytes: [UInt8], context: String) throws(PacketDecodingError) -> String {
        guard let text = String(validating: bytes, as: UTF8.self), let first = text.unicodeScalars.first else {
            throw .invalidValue(context: context, field: "URI encoding", value: UInt64(bytes.count))
        }
        guard let scheme = scheme(forCodePoint: first.value) else {
            throw .invalidValue(context: context, field: "URI scheme code point", value: UInt64(first.value))
        }
        return scheme + String(text.unicodeScalars.dropFirst())
    }
}
