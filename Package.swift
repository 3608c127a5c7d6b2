// swift-tools-version: 6.1
import PackageDescription

/// How every program here starts another: swift-subprocess, whose file descriptors are swift-system's.
let processes: [Target.Dependency] = [
  .product(name: "Subprocess", package: "swift-subprocess"),
  .product(name: "SystemPackage", package: "swift-system"),
]

let package = Package(
  name: "Splint",
  products: [
    .library(name: "SplintSecrets", targets: ["SplintSecrets"]),
    .library(name: "SplintSettings", targets: ["SplintSettings"]),
    .library(name: "SplintSecretsTesting", targets: ["SplintSecretsTesting"]),
    .executable(name: "splintctl", targets: ["splintctl"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
    .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
  ],
  targets: [
    .systemLibrary(
      name: "CLibSecret",
      pkgConfig: "libsecret-1",
      providers: [.apt(["libsecret-1-dev"])]
    ),
    // add_key(2) and keyctl(2), which Swift cannot call through the variadic syscall(2), for KernelKeyringStore.
    .target(name: "CKeyring"),
    .target(name: "SplintSystemCalls"),
    .target(
      name: "SplintSecrets",
      dependencies: ["CLibSecret", "SplintSystemCalls", "CKeyring"]
    ),
    .target(name: "SplintSecretsTesting", dependencies: ["SplintSecrets"]),
    .target(
      name: "SplintSettings",
      dependencies: ["SplintSystemCalls", .product(name: "SystemPackage", package: "swift-system")]
    ),
    .executableTarget(
      name: "splintctl",
      dependencies: [
        "SplintSecrets", "SplintSettings", "SplintSystemCalls",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "Subprocess", package: "swift-subprocess"),
      ]
    ),
    .executableTarget(
      name: "SplintTorture",
      dependencies: ["SplintSecrets", "SplintSettings", "TestSupport", "LibSecretFloor"] + processes,
      path: "Tests/SplintTorture"
    ),
    .executableTarget(
      name: "SplintBench",
      dependencies: ["SplintSecrets", "SplintSettings", "LibSecretFloor"] + processes,
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
      dependencies: ["SplintSecrets", "SplintSecretsTesting", "TestSupport"],
      path: "Tests/SecretsProbe"
    ),
    .target(name: "TestSupport", dependencies: processes, path: "Tests/TestSupport"),
    .executableTarget(
      name: "SettingsProbe",
      dependencies: ["SplintSettings"],
      path: "Tests/SettingsProbe"
    ),
    .testTarget(
      name: "SplintSecretsTests",
      dependencies: ["SplintSecrets", "SplintSecretsTesting", "CLibSecret", "SecretsProbe", "TestSupport", "splintctl"]
    ),
    .testTarget(
      name: "SplintSettingsTests",
      dependencies: ["SplintSettings", "SplintSystemCalls", "SettingsProbe", "TestSupport"]
    ),
    .testTarget(
      name: "SplintctlTests",
      dependencies: ["splintctl", "SplintSecrets", "TestSupport"]
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
