#if SplintFleet
  /// What a token's policies allow, as `sys/internal/ui/resultant-acl` shows them to the token: its grants, exact
  /// and glob, matched against the paths the credentials are at.
  enum VaultPolicy {
    /// Whether the resultant ACL in `body` (the answer's bytes) lets the token read somewhere in one of `areas`
    /// (each a folder when it ends with `/`, else one secret's path): a root token, or a grant with `read` that
    /// reaches into one.
    static func allowsReading(_ areas: [String], acl body: [UInt8]) -> Bool {
      let data = VaultJSON.parse(body)?["data"]
      if data?["root"]?.isTrue == true { return true }
      let grants = ["exact_paths", "glob_paths"].flatMap { kind in
        (data?[kind]?.members ?? []).filter { grant in
          grant.value["capabilities"]?.elements.contains { $0.text(in: body) == "read" } == true
        }.map { (path: $0.name, isGlob: kind == "glob_paths") }
      }
      return areas.contains { area in grants.contains { grant($0.path, isGlob: $0.isGlob, reaches: area) } }
    }

    /// Whether a policy's grant on `path` (a glob: every path that begins with it) reaches into `area` (a folder when
    /// it ends with `/`, else one secret's path). `+` stands for one segment in a grant, as in policies.
    static func grant(_ path: String, isGlob: Bool, reaches area: String) -> Bool {
      let grant = path.split(separator: "/", omittingEmptySubsequences: false)
      let target = area.split(separator: "/", omittingEmptySubsequences: false)
      let folder = area.hasSuffix("/")
      for (index, segment) in grant.enumerated() {
        // A grant that goes on below the folder is inside it; a glob's last segment is a prefix.
        if folder && index >= target.count - 1 { return true }
        guard index < target.count else { return false }
        if isGlob && index == grant.count - 1 { return target[index].hasPrefix(segment) }
        if segment != "+" && segment != target[index] { return false }
      }
      return grant.count == target.count
    }
  }
#endif
