import BluetoothCore

/// Test vectors are written as the spec prints them: hexadecimal, most significant octet first.
func number(_ text: String) -> UInt128 {
    UInt128(text.filter { $0 != " " }, radix: 16) ?? 0
}

func octets(_ text: String) -> [UInt8] {
    Hex.decode(text) ?? []
}

/// Core 6.0, Vol 3, Part H, Appendix D: the sample data shared by D.2 to D.8.
enum SampleData {
    // The P-256 sample keys: the debug key pair (A) and a second pair (B).
    static let privateA = octets("3f49f6d4 a3c55f38 74c9b3e3 d2103f50 4aff607b eb40b799 5899b8a6 cd3c1abd")
    static let publicAX = octets("20b003d2 f297be2c 5e2c83a7 e9f9a5b9 eff49111 acf4fddb cc030148 0e359de6")
    static let publicAY = octets("dc809c49 652aeb6d 63329abf 5a52155c 766345c2 8fed3024 741c8ed0 1589d28b")
    static let privateB = octets("55188b3d 32f6bb9a 900afcfb eed4e72a 59cb9ac2 f19d7cfb 6b4fdd49 f47fc5fd")
    static let publicBX = octets("1ea1f0f0 1faf1d96 09592284 f19e4c00 47b58afd 8615a69f 559077b2 2faaa190")
    static let publicBY = octets("4c55f33e 429dad37 7356703a 9ab85160 472d1130 e28e3676 5f89aff9 15b1214a")
    static let dhKey = octets("ec0234a3 57c8ad05 341010a6 0a397d9b 99796b13 b4f866f1 868d34f3 73bfa698")

    // U and V of D.2 (f4) and D.5 (g2).
    static let u = octets("20b003d2 f297be2c 5e2c83a7 e9f9a5b9 eff49111 acf4fddb cc030148 0e359de6")
    static let v = octets("55188b3d 32f6bb9a 900afcfb eed4e72a 59cb9ac2 f19d7cfb 6b4fdd49 f47fc5fd")
    static let n1 = number("d5cb8454 d177733e ffffb2ec 712baeab")
    static let n2 = number("a6e8e7cc 25a75f6e 216583f7 ff3dc4cf")
    static let a1: UInt64 = 0x00_5612_3737_BFCE
    static let a2: UInt64 = 0x00_A713_702D_CFC1
    static let macKey = number("2965f176 a1084a02 fd3f6a20 ce636e20")
    static let key = number("ec0234a3 57c8ad05 341010a6 0a397d9b")
}
