import Foundation

extension ValueStream.Continuation {
    /// ``yield(decoding:)`` with a decoding of its own (a serde value's, through ``Serialized``).
    @discardableResult
    func yield(decoding values: [Data], with decode: (Data) throws(BluejayError) -> Element) -> ValueStream<Element>.YieldResult {
        var decoded: [Element] = []
        decoded.reserveCapacity(values.count)
        var failure: BluejayError?
        for value in values {
            do throws(BluejayError) {
                decoded.append(try decode(value))
            } catch {
                failure = error
                break
            }
        }
        let result = yield(contentsOf: decoded)
        if let failure { finish(throwing: failure) }
        return result
    }
}

extension ValueStream.Continuation where Element: Receivable {
    /// Makes an `Element` from each of a batch's values and buffers them at once. The first
    /// value that cannot be made ends the stream with its
    /// ``BluejayError/deserializationFailed(type:data:reason:)``, after the values before it.
    @discardableResult
    func yield(decoding values: [Data]) -> ValueStream<Element>.YieldResult {
        var decoded: [Element] = []
        decoded.reserveCapacity(values.count)
        var failure: BluejayError?
        for value in values {
            do throws(BluejayError) {
                decoded.append(try decode(value, as: Element.self))
            } catch {
                failure = error
                break
            }
        }
        let result = yield(contentsOf: decoded)
        if let failure { finish(throwing: failure) }
        return result
    }
}
