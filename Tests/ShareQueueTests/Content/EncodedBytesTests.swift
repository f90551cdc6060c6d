import Foundation
import Testing
@testable import ShareQueueCore
import ShareQueueCodable

/// The stored bytes of typed values, pinned: equal values must stay equal bytes
/// from one version to the next, or a publish sees a change where there is none
/// and a host that compares records by their bytes sees two.
@Suite("Encoded bytes")
struct EncodedBytesTests {
    /// The stored `json` of a value, as an append writes it.
    private func stored(_ value: any Encodable) throws -> String {
        guard case .value(let json, _) = try RecordDraft(encoding: value, kind: "test", source: "test").content else { return "not a value draft" }
        return String(decoding: json.bytes, as: UTF8.self)
    }

    /// Each corpus value with the bytes it was stored as when this test was written.
    private static var corpus: [(name: String, value: any Encodable, bytes: String)] { [
        ("names", EncodingCorpus.Names(),
         "{\"\":8,\"\\u0001start\":3,\"Zeta\":9,\"a\":13,\"a\\u0000\":15,\"a\\u0001\":18,\"a \":19,\"a\\\"\":16,\"a#\":17,\"a\\\\\":20,\"a]\":21,\"ab\":14,\"alpha\":10,\"back\\\\slash\":1,\"e\u{301}\":6,\"new\\nline\":2,\"quote\\\"d\":0,\"tab\\t\":11,\"\u{7F}\":4,\"\u{E9}\":5,\"\u{2028}\":12,\"\u{1F600}\":7}"),
        ("duplicates", EncodingCorpus.Duplicates(),
         "{\"a\":[3],\"b\":4,\"c\":false,\"d\":[\"late\"]}"),
        ("many members", EncodingCorpus.ManyMembers(),
         "{\"m0\":\"again 0\",\"m1\":1,\"m10\":10,\"m11\":11,\"m12\":12,\"m13\":13,\"m14\":\"again 14\",\"m15\":15,\"m16\":16,\"m17\":17,\"m18\":18,\"m19\":19,\"m2\":2,\"m20\":20,\"m21\":\"again 21\",\"m22\":22,\"m23\":23,\"m24\":24,\"m25\":25,\"m26\":26,\"m27\":27,\"m28\":\"again 28\",\"m29\":29,\"m3\":3,\"m30\":30,\"m31\":31,\"m32\":32,\"m33\":33,\"m34\":34,\"m35\":\"again 35\",\"m36\":36,\"m37\":37,\"m38\":38,\"m39\":39,\"m4\":4,\"m5\":5,\"m6\":6,\"m7\":\"again 7\",\"m8\":8,\"m9\":9}"),
        ("late filling", EncodingCorpus.LateFilling(),
         "{\"fifth\":\"3B1A7A47-62E9-44DE-8AFC-C39F9309E7F9\",\"first\":[1,{\"fourth\":\"x\"},[0.5],{\"level\":9},2],\"second\":2,\"super\":{\"level\":1},\"third\":{\"first\":\"n\",\"second\":\"1970-01-01T00:00:00.000Z\"}}"),
        ("unused super", EncodingCorpus.UnusedSuper(),
         "{\"super\":[0.1],\"value\":{}}"),
        ("path echo", EncodingCorpus.PathEcho(),
         "{\"here\":\"here#-\",\"list\":[\"list#-/Index 0#0\",\"list#-/Index 1#1\",{\"here\":\"list/Index 2\",\"nested\":\"list#-/Index 2#2/nested#-\",\"single\":\"list#-/Index 2#2/single#-\"},\"list#-/Index 3#3\",\"list\"]}"),
        ("nested", EncodingCorpus.Nested(),
         "{\"byName\":{\"\":0,\"Z\":2,\"zz\":1},\"byNumber\":{\"-1\":\"minus one\",\"10\":\"ten\",\"2\":\"two\"},\"empty\":[],\"emptyObject\":{},\"floats\":[0.1,1.1,-3.4028235e+38],\"grid\":[[0.1,-0.0,1e+300,5e-324],[],[3.4028234663852886e+38]],\"leaves\":[{\"name\":\"a\",\"tags\":[]},{\"level\":-128,\"name\":\"b\\u0000\\u001f\\\"\\\\/\",\"tags\":[\"x\",\"y\"]}],\"nothing\":{},\"optionals\":[1,null,3],\"shapes\":[{\"circle\":{\"radius\":2.5}},{\"polygon\":{\"_0\":[1,2],\"closed\":false}},{\"empty\":{}}],\"someLeaf\":{\"level\":0,\"name\":\"\u{E9} e\u{301} \u{1F600} \u{2028}\u{7F}\",\"tags\":[\"\\n\\r\\t\"]},\"widths\":{\"flag\":false,\"int\":9223372036854775807,\"int128\":-170141183460469231731687303715884105728,\"int16\":-32768,\"int32\":-2147483648,\"int64\":-9223372036854775808,\"int8\":-128,\"uint\":0,\"uint128\":340282366920938463463374607431768211455,\"uint16\":65535,\"uint32\":4294967295,\"uint64\":18446744073709551615,\"uint8\":255}}"),
        ("foundations", EncodingCorpus.Foundations(),
         "{\"data\":[\"\",\"AA==\",\"AAE=\",\"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWltcXV5fYGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+AgYKDhIWGh4iJiouMjY6PkJGSk5SVlpeYmZqbnJ2en6ChoqOkpaanqKmqq6ytrq+wsbKztLW2t7i5uru8vb6/wMHCw8TFxsfIycrLzM3Oz9DR0tPU1dbX2Nna29zd3t/g4eLj5OXm5+jp6uvs7e7v8PHy8/T19vf4+fr7/P3+/w==\"],\"dates\":[\"2025-11-29T14:52:20.123Z\",\"0001-01-01T00:00:00.000Z\",\"1970-01-01T00:00:00.000Z\",\"9999-12-31T23:59:59.999Z\"],\"decimals\":[12345678901234567890.123456789,0,-1.5],\"json\":{\"b\":1.50,\"a\":[null,true,\"\\u0000\"],\"c\":1e400},\"urls\":[\"https://example.com/a%20b?q=1#frag\",\"https://x.org/a/b/c?d\",\"mailto:someone@example.com\",\"file:///tmp/a%20file\"],\"uuid\":\"3B1A7A47-62E9-44DE-8AFC-C39F9309E7F9\"}"),
        ("every kind", EveryKind(),
         "{\"byName\":{\"\":0,\"one\":1,\"two\":2},\"byNumber\":{\"1\":\"one\",\"20\":\"twenty\"},\"data\":\"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWltcXV5fYGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+AgYKDhIWGh4iJiouMjY6PkJGSk5SVlpeYmZqbnJ2en6ChoqOkpaanqKmqq6ytrq+wsbKztLW2t7i5uru8vb6/wMHCw8TFxsfIycrLzM3Oz9DR0tPU1dbX2Nna29zd3t/g4eLj5OXm5+jp6uvs7e7v8PHy8/T19vf4+fr7/P3+/w==\",\"date\":\"2024-11-29T20:32:20.123Z\",\"decimal\":12345678901234567890.123456789,\"double\":0.1,\"flag\":true,\"float\":1.1,\"inner\":{\"level\":-3,\"name\":\"in\"},\"int\":-9223372036854775808,\"int128\":-170141183460469231731687303715884105728,\"int16\":32767,\"int32\":-2147483648,\"int64\":-9223372036854775808,\"int8\":-128,\"json\":{\"big\":123456789012345678901234567890,\"decimal\":1.50,\"huge\":1e400,\"list\":[null,false,\"\\u0000\"]},\"nested\":[[\"a\"],[],[\"b\",\"c\"]],\"numbers\":[1,-2,3],\"oldDate\":\"1899-12-31T23:59:59.500Z\",\"shapes\":[{\"circle\":{\"radius\":2.5}},{\"polygon\":{\"_0\":[1,2,3],\"closed\":true}},{\"empty\":{}}],\"some\":7,\"text\":\"NUL \\u0000 then \u{E9}, e\u{301}, \u{1F44D}\u{1F3FD}, \\\"quotes\\\", \\\\, \\n\\t and \\u001f\",\"tiny\":5e-324,\"uint\":18446744073709551615,\"uint128\":340282366920938463463374607431768211455,\"uint16\":65535,\"uint32\":4294967295,\"uint64\":18446744073709551615,\"uint8\":255,\"url\":\"https://example.com/a%20b?q=1#frag\",\"uuid\":\"3B1A7A47-62E9-44DE-8AFC-C39F9309E7F9\"}"),
        ("string", EncodingCorpus.single("string"), "\"plain\""),
        ("escaped string", EncodingCorpus.single("escaped string"), "\"\\u0000\\u0001\\u0008\\u000c\\u001f\\\"\\\\/\u{7F}\u{2028}\u{E9}\""),
        ("int", EncodingCorpus.single("int"), "-42"),
        ("true", EncodingCorpus.single("true"), "true"),
        ("nil", EncodingCorpus.single("nil"), "null"),
        ("double", EncodingCorpus.single("double"), "0.30000000000000004"),
        ("negative zero", EncodingCorpus.single("negative zero"), "-0.0"),
        ("float", EncodingCorpus.single("float"), "16777216.0"),
        ("date", EncodingCorpus.single("date"), "\"2025-11-29T14:52:20.124Z\""),
        ("url", EncodingCorpus.single("url"), "\"https://example.com\""),
        ("data", EncodingCorpus.single("data"), "\"AQID\""),
        ("json", EncodingCorpus.single("json"), "[-0,{}]"),
        ("empty array", EncodingCorpus.single("empty array"), "[]"),
        ("empty struct", EncodingCorpus.single("empty struct"), "{}"),
        ("array of optionals", EncodingCorpus.single("array of optionals"), "[null,\"x\"]"),
        ("int128", EncodingCorpus.single("int128"), "170141183460469231731687303715884105727"),
        ("uint8 array", EncodingCorpus.single("uint8 array"), "[0,255]"),
    ] }

    @Test("Every value of the corpus is stored as the bytes it always was")
    func corpusBytes() throws {
        for (name, value, bytes) in Self.corpus {
            #expect(try stored(value) == bytes, "\(name)")
        }
    }

    @Test("A value that cannot be encoded names where it is")
    func errorPath() throws {
        struct Point: Encodable { var x: Double }
        struct Dated: Encodable { var dates: [String: Date] }
        let cases: [(value: any Encodable, description: String)] = [
            (["items": [Point(x: 1), Point(x: .nan)]], "EncodingError.invalidValue: nan (Double). Path: items[1].x. Debug description: JSON has no nan"),
            (["grid": [[1.0, -.infinity]]], "EncodingError.invalidValue: -inf (Double). Path: grid[0][1]. Debug description: JSON has no -inf"),
            (Dated(dates: ["late": Date(timeIntervalSince1970: 1e12)]),
             "EncodingError.invalidValue: <description unavailable> (Date). Path: dates.late. Debug description: a date must lie in the years 1 to 9999"),
        ]
        for (value, description) in cases {
            do {
                _ = try stored(value)
                Issue.record("encoded \(value)")
            } catch let error as ShareQueueError {
                #expect(error.code == .badData)
                #expect(error.underlying.map { String(describing: $0) } == description)
            }
        }
    }
}
