// swift-tools-version: 6.2
import PackageDescription

/// How every program here starts another: swift-subprocess, whose file descriptors are swift-system's.
let processes: [Target.Dependency] = [
  .product(name: "Subprocess", package: "swift-subprocess"),
  .product(name: "SystemPackage", package: "swift-system"),
]

/// The HTTP client of SplintFleet and its tests, built only with the SplintFleet trait.
let fleetClient: [Target.Dependency] = [
  .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["SplintFleet"])),
  .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["SplintFleet"])),
  .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["SplintFleet"])),
  // For NIOConnectionError, whose parts a failed connection's cause is read from.
  .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["SplintFleet"])),
  .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["SplintFleet"])),
  // HMAC-SHA256, for a machine's name derived from its machine ID (async-http-client builds it already).
  .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["SplintFleet"])),
]

let package = Package(
  name: "Splint",
  products: [
    .library(name: "SplintSecrets", targets: ["SplintSecrets"]),
    .library(name: "SplintSettings", targets: ["SplintSettings"]),
    .library(name: "SplintSecretsTesting", targets: ["SplintSecretsTesting"]),
    .library(name: "SplintConfiguration", targets: ["SplintConfiguration"]),
    .library(name: "SplintFleet", targets: ["SplintFleet"]),
    .executable(name: "splintctl", targets: ["splintctl"]),
  ],
  traits: [
    .trait(
      name: "SplintConfiguration",
      description: """
        The SplintConfiguration library: settings and secrets as apple/swift-configuration providers. Off by default; \
        without it the library is empty and swift-configuration is never built.
        """
    ),
    .trait(
      name: "SplintConfigurationBenchmarks",
      description: """
        SplintConfiguration, and swift-configuration's Reloading and JSON traits, which script/bench needs to set our \
        settings provider beside its ReloadingFileProvider. Not for users: Reloading brings swift-log, \
        swift-metrics and swift-service-lifecycle.
        """,
      enabledTraits: ["SplintConfiguration"]
    ),
    .trait(
      name: "SplintFleet",
      description: """
        The SplintFleet library: settings from an etcd cluster, followed into a copy on each machine that every \
        SettingsStore reads, and credentials from OpenBao or HashiCorp Vault. Off by default; without it the library \
        is empty and async-http-client (with SwiftNIO) is never built. Reading a fleet copy needs no trait.
        """
    ),
    .default(enabledTraits: []),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
    .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
    // The fleet's one HTTP client, and the SwiftNIO types its API is made of; built only with the SplintFleet trait.
    .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
    // Only its core: none of its traits (JSON, Reloading, ...) unless our benchmarks trait asks for them.
    .package(
      url: "https://github.com/apple/swift-configuration", from: "1.4.0",
      traits: [
        .trait(name: "JSON", condition: .when(traits: ["SplintConfigurationBenchmarks"])),
        .trait(name: "Reloading", condition: .when(traits: ["SplintConfigurationBenchmarks"])),
      ]
    ),
  ],
  targets: [
    .systemLibrary(
      name: "CLibSecret",
      pkgConfig: "libsecret-1",
      providers: [.apt(["libsecret-1-dev"])]
    ),
    // add_key(2) and keyctl(2), which Swift cannot call through the variadic syscall(2), for KernelKeyringStore.
    .target(name: "CKeyring"),
    .target(name: "CFileSystem"),
    .target(name: "SplintSystemCalls", dependencies: ["CFileSystem"]),
    // libsecret's, GIO's and GLib's functions, reached through dlopen the first time a Secret Service operation runs
    // rather than linked: programs that do not ask the Secret Service start without them (see its header).
    .target(name: "CLibSecretLoader"),
    .target(
      name: "SplintSecrets",
      dependencies: ["CLibSecretLoader", "SplintSystemCalls", "CKeyring"]
    ),
    .target(name: "SplintSecretsTesting", dependencies: ["SplintSecrets"]),
    .target(
      name: "SplintSettings",
      dependencies: ["SplintSystemCalls", .product(name: "SystemPackage", package: "swift-system")]
    ),
    // Empty unless the SplintConfiguration trait is on: its sources are inside `#if SplintConfiguration`.
    .target(
      name: "SplintConfiguration",
      dependencies: [
        "SplintSecrets", "SplintSettings",
        .product(
          name: "Configuration", package: "swift-configuration", condition: .when(traits: ["SplintConfiguration"])),
      ]
    ),
    // Empty unless the SplintFleet trait is on: its sources are inside `#if SplintFleet`.
    .target(
      name: "SplintFleet",
      dependencies: ["SplintSecrets", "SplintSettings", "SplintSystemCalls"] + fleetClient
    ),
    .executableTarget(
      name: "splintctl",
      dependencies: [
        "SplintSecrets", "SplintSettings", "SplintSystemCalls", "SplintFleet",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "Subprocess", package: "swift-subprocess"),
      ]
    ),
    .executableTarget(
      name: "SplintTorture",
      dependencies: ["SplintSecrets", "SplintSettings", "SplintFleet", "TestSupport", "LibSecretFloor"] + processes,
      path: "Tests/SplintTorture"
    ),
    .executableTarget(
      name: "SplintBench",
      dependencies: [
        "SplintSecrets", "SplintSettings", "LibSecretFloor", "SplintConfiguration", "SplintFleet", "TestSupport",
        .product(name: "SystemPackage", package: "swift-system"),
        .product(
          name: "Configuration", package: "swift-configuration",
          condition: .when(traits: ["SplintConfigurationBenchmarks"])
        ),
      ],
      path: "Benchmarks/SplintBench"
    ),
    .target(
      name: "LibSecretFloor",
      dependencies: ["CLibSecret"],
      path: "Benchmarks/LibSecretFloor"
    ),
    .executableTarget(
      name: "SplintDemo",
      dependencies: ["SplintSecrets", "SplintSettings"],
      path: "Examples/Demo"
    ),
    .executableTarget(
      name: "SecretsProbe",
      dependencies: ["SplintSecrets", "SplintSecretsTesting", "SplintFleet", "TestSupport"],
      path: "Tests/SecretsProbe"
    ),
    .target(name: "TestSupport", dependencies: processes, path: "Tests/TestSupport"),
    // An unprivileged user attacking another's settings files, for PrivilegeBoundaryTests and script/torture.
    .executableTarget(name: "Attacker", path: "Tests/Attacker"),
    .executableTarget(
      name: "SettingsProbe",
      dependencies: ["SplintSettings"],
      path: "Tests/SettingsProbe"
    ),
    // Compiles only while CLibSecretLoader's declarations match libsecret's, GIO's and GLib's headers.
    .target(
      name: "LibSecretABICheck", dependencies: ["CLibSecret", "CLibSecretLoader"], path: "Tests/LibSecretABICheck"),
    .testTarget(
      name: "SplintSecretsTests",
      dependencies: [
        "SplintSecrets", "SplintSecretsTesting", "CLibSecret", "CLibSecretLoader", "LibSecretABICheck", "SecretsProbe",
        "TestSupport", "splintctl",
      ]
    ),
    .testTarget(
      name: "SplintSettingsTests",
      dependencies: ["SplintSettings", "SplintSystemCalls", "SettingsProbe", "Attacker", "splintctl", "TestSupport"]
    ),
    .testTarget(
      name: "SplintConfigurationTests",
      dependencies: [
        "SplintConfiguration", "SplintSecrets", "SplintSettings", "SettingsProbe", "TestSupport",
        .product(
          name: "Configuration", package: "swift-configuration", condition: .when(traits: ["SplintConfiguration"])),
        .product(
          name: "ConfigurationTesting", package: "swift-configuration",
          condition: .when(traits: ["SplintConfiguration"])
        ),
      ]
    ),
    .testTarget(
      name: "SplintFleetTests",
      dependencies: [
        "SplintFleet", "SplintSecrets", "SplintSettings", "SplintSecretsTesting", "TestSupport", "splintctl",
        "SettingsProbe", "SecretsProbe", "Attacker",
      ] + fleetClient
    ),
    .testTarget(
      name: "SplintctlTests",
      dependencies: ["splintctl", "SplintSecrets", "SettingsProbe", "TestSupport"]
    ),
  ],
  swiftLanguageModes: [.v6]
)

// The upcoming language features the Swift server packages turn on, for every target alike.
for target in package.targets where target.type != .system {
  target.swiftSettings =
    (target.swiftSettings ?? []) + [
      .enableUpcomingFeature("ExistentialAny"),
      .enableUpcomingFeature("MemberImportVisibility"),
      .enableUpcomingFeature("InternalImportsByDefault"),
    ]
}
