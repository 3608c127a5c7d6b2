extension Sequence {
  /// The first non-nil result of `transform`, calling it once per element, up to that one.
  ///
  /// Not `lazy.compactMap(transform).first`: that calls `transform` twice for the element it returns (once to find
  /// it, once to read it) and force-unwraps the second result, which traps when `transform` reads state that another
  /// thread changed in between (a file's problem, mounts).
  func firstNonNil<Result>(_ transform: (Element) throws -> Result?) rethrows -> Result? {
    for element in self {
      if let result = try transform(element) { return result }
    }
    return nil
  }
}
