#if SplintFleet
  import Foundation
  import TestSupport
  import Testing
  @testable import SplintFleet
  import SplintSettings

  /// `fleet enroll` and `fleet forget` against a cluster with authentication on, as the guide sets it up: a user and
  /// role per machine, so that each follower writes its own machine's keys alone.
  @Suite(.startsServers) struct EnrollTests {
    /// A cluster with authentication on (`root`, password `rootpw`), holding `/splint/app/interval` = 60, and the
    /// `EtcdCluster` of its root.
    func start() async throws -> (LocalEtcd, EtcdCluster) {
      let etcd = try await LocalEtcd.start(size: 1)
      try await etcd.put("/splint/app/interval", "60")
      try await etcd.enableAuthentication(user: "reader", password: "readpw", readOnly: "/splint/")
      let root = EtcdCluster(
        endpoints: etcd.endpoints, user: "root", password: try password("rootpw", for: "root"),
        requestTimeout: .seconds(5))
      return (etcd, root)
    }

    /// `machine`'s follower, authenticating as its enrolled user with `secret`.
    func follower(_ etcd: LocalEtcd, _ machine: FleetMachine, _ secret: String) throws -> Machine {
      let cluster = EtcdCluster(
        endpoints: etcd.endpoints, user: machine.etcdUser, password: try password(secret, for: machine.etcdUser),
        requestTimeout: .seconds(5))
      return Machine(cluster: cluster, machine: machine.name)
    }

    @Test("an enrolled machine reports as itself, a report it forges for another is refused, and forget removes it")
    func enrolled() async throws {
      let (etcd, root) = try await start()
      let web1 = try FleetMachine(name: "web-1"), web2 = try FleetMachine(name: "web-2")
      try await root.enroll(web1, password: Data("web-1-pw".utf8))
      try await root.enroll(web2, password: Data("web-2-pw".utf8))

      // Its follower follows, and reports, as its own user.
      let machine = try follower(etcd, web1, "web-1-pw")
      try machine.start()
      #expect(await machine.waitFor("interval", 60))
      let rootUser = "root:rootpw"
      #expect(
        await eventually {
          let reports = try? await etcd.etcdctl(
            ["get", "--prefix", "/splint.machines/web-1/", "--keys-only"], user: rootUser)
          return reports?.contains("/splint.machines/web-1/reports/app") == true
        }, "\(machine.events)")
      #expect(!machine.events.contains { $0.hasPrefix("cannot report") }, "\(machine.events)")

      // A report its role may no longer write is refused, and written once the role may again: the follower says
      // both, and goes on following all along. Each change of a role makes every token older than it stale.
      let role = web1.etcdUser, own = "/splint.machines/web-1/"
      try await etcd.etcdctl(["role", "revoke-permission", role, own, "--prefix=true"], user: rootUser)
      let before = try await etcd.revision()
      try await etcd.put("/splint/app/interval", "61", user: rootUser)
      #expect(await machine.waitFor("interval", 61))
      #expect(
        await eventually { machine.events.contains { $0.hasPrefix("cannot report") } }, "\(machine.events)")
      let store = machine.store()
      #expect(await eventually { store.fleetStatus.first?.reportingFailure?.contains("permission") == true })
      try await etcd.etcdctl(["role", "grant-permission", role, "readwrite", own, "--prefix=true"], user: rootUser)
      #expect(
        await eventually { machine.events.filter { $0.hasPrefix("reporting to the cluster") }.count == 2 },
        "\(machine.events)")
      #expect(
        await eventually {
          store.fleetStatus.first.map { $0.reportingFailure == nil && $0.machine == "web-1" } == true
        }, "\(store.fleetStatus)")
      let report = try await etcd.etcdctl(["get", own + "reports/app", "--print-value-only"], user: rootUser)
      #expect((FleetReport.decode(Array(report.utf8))?.revision ?? 0) > before, "\(report)")
      try await etcd.put("/splint/app/interval", "60", user: rootUser)
      #expect(await machine.waitFor("interval", 60))

      // Its user may write its own keys, and no other machine's, nor the settings.
      let web1User = "splint-machine-web-1:web-1-pw"
      try await etcd.put("/splint.machines/web-1/reports/other", "{}", user: web1User)
      for key in ["/splint.machines/web-2/reports/app", "/splint/app/interval"] {
        let forged = await #expect(throws: TestSupport.EtcdFailure.self) {
          try await etcd.put(key, "{}", user: web1User)
        }
        #expect(forged?.output.contains("permission denied") == true, "\(key): \(String(describing: forged))")
      }

      // Enrolled twice, a machine is refused, its password unchanged; a user of another role may not enrol.
      let twice = await #expect(throws: FleetError.self) {
        try await root.enroll(web1, password: Data("other".utf8))
      }
      #expect(twice?.code == .machineEnrolled, "\(String(describing: twice))")
      #expect(twice?.description.contains("splintctl fleet forget --machine web-1") == true)
      var reader = root
      reader.user = "reader"
      reader.password = try password("readpw", for: "reader")
      let denied = await #expect(throws: FleetError.self) {
        try await reader.enroll(try FleetMachine(name: "web-3"), password: Data("pw".utf8))
      }
      #expect(denied?.code == .permissionDenied && denied?.description.contains("--user root") == true)

      // A password that is not text is refused before anything is made.
      let notText = await #expect(throws: FleetError.self) {
        try await root.enroll(try FleetMachine(name: "web-4"), password: Data([0x66, 0xFF]))
      }
      #expect(notText?.code == .invalidConfiguration, "\(String(describing: notText))")
      #expect(try await !etcd.etcdctl(["role", "list"], user: rootUser).contains("web-4"))

      // A live machine is not forgotten; once its follower stops, its reports, user and role go.
      let live = await #expect(throws: FleetError.self) { try await root.forget(web1) }
      #expect(live?.code == .machineInUse, "\(String(describing: live))")
      await machine.stop()
      let forgotten = try await root.forget(web1)
      #expect(forgotten.user && forgotten.role && forgotten.keys == 2, "\(forgotten)")
      let users = try await etcd.etcdctl(["user", "list"], user: rootUser)
      #expect(!users.contains("splint-machine-web-1") && users.contains("splint-machine-web-2"), "\(users)")
      let roles = try await etcd.etcdctl(["role", "list"], user: rootUser)
      #expect(!roles.contains("splint-machine-web-1"), "\(roles)")
      #expect(try await etcd.etcdctl(["get", "--prefix", "/splint.machines/web-1/"], user: rootUser).isEmpty)
      #expect(try await root.forget(web1).isEmpty)

      // A role left by an enrolment cut short is used again.
      try await etcd.etcdctl(["role", "add", "splint-machine-web-1"], user: rootUser)
      try await root.enroll(web1, password: Data("web-1-new".utf8))
      try await etcd.put("/splint.machines/web-1/alive", "{}", user: "splint-machine-web-1:web-1-new")
      await etcd.stopAll()
    }

    @Test("splintctl fleet enroll prints the password alone, which the machine's follower authenticates with")
    func fromTheCommandLine() async throws {
      let (etcd, _) = try await start()
      let scratch = Scratch()
      let credentials = scratch.url("credentials")
      try FileManager.default.createDirectory(at: credentials, withIntermediateDirectories: true)
      try Data("rootpw".utf8).write(to: credentials.appendingPathComponent("etcd__root"))
      var environment = ProcessInfo.processInfo.environment
      environment["CREDENTIALS_DIRECTORY"] = credentials.path
      environment["ETCDCTL_ENDPOINTS"] = nil
      let fleet = [Programs.helper("splintctl"), "fleet"]
      let cluster = ["--endpoints", etcd.endpoints[0], "--user", "root"]

      let enrolled = try await Programs.run(
        fleet + ["enroll", "--machine", "db-1"] + cluster, environment: environment)
      #expect(enrolled.status == 0, "\(enrolled)")
      // Alone, without a newline (standard output is no terminal here): what a credential file holds.
      #expect(
        enrolled.stdout.utf8.count == 32
          && enrolled.stdout.allSatisfy { $0.isLetter || $0.isNumber || "-_".contains($0) })
      #expect(enrolled.stderr.contains("etcd__splint-machine-db-1"), "\(enrolled.stderr)")
      try await etcd.put("/splint.machines/db-1/alive", "{}", user: "splint-machine-db-1:" + enrolled.stdout)
      let again = try await Programs.run(fleet + ["enroll", "--machine", "db-1"] + cluster, environment: environment)
      #expect(again.status == 70 && again.stdout.isEmpty, "\(again)")
      #expect(again.stderr.contains("enrolled already"), "\(again.stderr)")

      let forgot = try await Programs.run(fleet + ["forget", "--machine", "db-1"] + cluster, environment: environment)
      #expect(forgot.status == 70, "a presence stands for a live follower: \(forgot)")
      try await etcd.etcdctl(["del", "/splint.machines/db-1/alive"], user: "root:rootpw")
      let forgotten = try await Programs.run(
        fleet + ["forget", "--machine", "db-1"] + cluster, environment: environment)
      #expect(forgotten.status == 0, "\(forgotten)")
      #expect(forgotten.stdout == "Forgot db-1: removed the user splint-machine-db-1, the role splint-machine-db-1.\n")
      let nothing = try await Programs.run(fleet + ["forget", "--machine", "db-1"] + cluster, environment: environment)
      #expect(nothing.status == 1 && nothing.stderr.contains("holds nothing of the machine db-1"), "\(nothing)")
      let badName = try await Programs.run(fleet + ["enroll", "--machine", "a/b"] + cluster, environment: environment)
      #expect(badName.status == 64 && badName.stdout.isEmpty, "\(badName)")
      await etcd.stopAll()
    }
  }
#endif
