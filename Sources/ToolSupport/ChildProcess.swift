#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif
import ShareQueueSystem
import ShareQueueCore

extension Host {
    /// A started child process and the pipe ends this process holds.
    package struct Child {
        package let pid: Int32
        /// The write end of the child's standard input, if it was piped.
        package let input: FileDescriptor?
        /// The read end of the child's standard output, if it was piped.
        package let output: FileDescriptor?
    }

    /// Starts a program. Standard input is a new pipe or /dev/null, standard
    /// output a new pipe or this process's, standard error this process's or /dev/null.
    /// - Parameter environment: variables to set on top of this process's own.
    /// The child starts with default signal handling (this process ignores
    /// SIGPIPE and SIGXFSZ), and with `newProcessGroup` in a group of its own, so that a
    /// Ctrl-C meant for this process does not kill it mid-batch. With
    /// `holdingStops`, SIGINT and SIGTERM start blocked: one sent before the
    /// child installs its handlers waits for them (`StopRequest` unblocks them)
    /// instead of killing it.
    package static func spawn(_ path: String, _ arguments: [String], environment: [String: String] = [:],
                              pipeInput: Bool = false, pipeOutput: Bool = false, silenceErrors: Bool = false,
                              newProcessGroup: Bool = false, holdingStops: Bool = false) throws(SystemError) -> Child {
        let inputPipe = pipeInput ? try closeOnExecPipe() : nil
        let outputPipe: (read: Int32, write: Int32)?
        do { outputPipe = pipeOutput ? try closeOnExecPipe() : nil } catch {
            if let inputPipe { _ = systemClose(inputPipe.read); _ = systemClose(inputPipe.write) }
            throw error
        }

        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t? = nil
        #else
        var actions = posix_spawn_file_actions_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let inputPipe {
            posix_spawn_file_actions_adddup2(&actions, inputPipe.read, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        if let outputPipe { posix_spawn_file_actions_adddup2(&actions, outputPipe.write, 1) }
        if silenceErrors { posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }

        var variables: [String] = []
        #if canImport(Darwin)
        let current: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = _NSGetEnviron().pointee
        #else
        let current: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = environ
        #endif
        var index = 0
        while let pointer = current?[index] {
            let variable = String(cString: pointer)
            let name = variable.split(separator: "=", maxSplits: 1).first.map(String.init) ?? variable
            if environment[name] == nil { variables.append(variable) }
            index += 1
        }
        variables += environment.map { "\($0.key)=\($0.value)" }
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = variables.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) }; envp.forEach { free($0) } }

        #if canImport(Darwin)
        var attributes: posix_spawnattr_t? = nil
        #else
        var attributes = posix_spawnattr_t()
        #endif
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        sigaddset(&defaults, SIGXFSZ)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGTERM)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var blocked = sigset_t()
        sigemptyset(&blocked)
        if holdingStops {
            sigaddset(&blocked, SIGINT)
            sigaddset(&blocked, SIGTERM)
        }
        posix_spawnattr_setsigmask(&attributes, &blocked)
        var flags = Int32(POSIX_SPAWN_SETSIGDEF) | Int32(POSIX_SPAWN_SETSIGMASK)
        if newProcessGroup {
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        if let inputPipe { _ = systemClose(inputPipe.read) }
        if let outputPipe { _ = systemClose(outputPipe.write) }
        guard result == 0 else {
            if let inputPipe { _ = systemClose(inputPipe.write) }
            if let outputPipe { _ = systemClose(outputPipe.read) }
            throw SystemError(call: "posix_spawn", errno: result)
        }
        return Child(pid: pid, input: inputPipe.map { FileDescriptor(rawValue: $0.write) },
                     output: outputPipe.map { FileDescriptor(rawValue: $0.read) })
    }

    /// Starts `/bin/sh -c command` with a new pipe as its standard input.
    package static func spawnShell(_ command: String) throws(SystemError) -> (pid: Int32, input: FileDescriptor) {
        let child = try spawn("/bin/sh", ["-c", command], pipeInput: true, newProcessGroup: true)
        return (child.pid, child.input!)
    }

    /// Sends SIGKILL to a process.
    package static func kill(_ pid: Int32) { _ = systemKill(pid, SIGKILL) }

    /// Waits for a child; returns its status as `waitForExit` does and its peak resident memory in bytes.
    package static func waitForExitMeasuringMemory(_ pid: Int32) throws(SystemError) -> (status: Int32, peakMemory: Int64) {
        var status: Int32 = 0
        var usage = rusage()
        _ = try retryingOnInterrupt("wait4") { wait4(pid, &status, 0, &usage) }
        let low = status & 0x7f
        #if canImport(Darwin)
        let peak = Int64(usage.ru_maxrss)          // bytes on Darwin
        #else
        let peak = Int64(usage.ru_maxrss) * 1024   // kilobytes on Linux
        #endif
        return (low == 0 ? (status >> 8) & 0xff : 128 + low, peak)
    }

    /// Whether a status from `waitForExit` is a process ended by a signal that
    /// asks it to stop (SIGHUP, SIGINT, SIGTERM), as a service manager stopping
    /// a whole group sends. SIGKILL is not among them: the kernel's out-of-memory
    /// killer sends it, and a record that always gets its command killed must
    /// still be found and set aside.
    package static func wasStopped(_ status: Int32) -> Bool {
        [SIGHUP, SIGINT, SIGTERM].contains { status == 128 + $0 }
    }

    /// Whether a status from `waitForExit` is a process ended by a signal of a crash (SIGSEGV,
    /// SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS) or by SIGKILL, as the out-of-memory killer ends one.
    package static func wasCrashed(_ status: Int32) -> Bool {
        [SIGKILL, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS].contains { status == 128 + $0 }
    }

    /// The name of the signal a status above 128 from `waitForExit` stands for, such as `SIGPIPE`, if it is a common one.
    package static func signalName(ofStatus status: Int32) -> String? {
        let names: [Int32: String] = [SIGHUP: "SIGHUP", SIGINT: "SIGINT", SIGQUIT: "SIGQUIT", SIGILL: "SIGILL", SIGTRAP: "SIGTRAP",
                                       SIGABRT: "SIGABRT", SIGBUS: "SIGBUS", SIGFPE: "SIGFPE", SIGKILL: "SIGKILL", SIGUSR1: "SIGUSR1",
                                       SIGSEGV: "SIGSEGV", SIGUSR2: "SIGUSR2", SIGPIPE: "SIGPIPE", SIGALRM: "SIGALRM", SIGTERM: "SIGTERM",
                                       SIGXCPU: "SIGXCPU", SIGXFSZ: "SIGXFSZ", SIGSYS: "SIGSYS"]
        return status > 128 ? names[status - 128] : nil
    }

    /// Waits for a child and returns its exit status, or 128 + the signal that ended it.
    package static func waitForExit(_ pid: Int32) throws(SystemError) -> Int32 {
        var status: Int32 = 0
        _ = try retryingOnInterrupt("waitpid") { waitpid(pid, &status, 0) }
        return exitCode(status)
    }

    private static func exitCode(_ status: Int32) -> Int32 {
        let low = status & 0x7f
        if low == 0 { return (status >> 8) & 0xff }
        return 128 + low
    }

    /// Waits for a child as `waitForExit` does, but returns nil as soon as
    /// `giveUp` says so (checked every 20 ms), leaving the child running.
    package static func waitForExit(_ pid: Int32, unless giveUp: () -> Bool) throws(SystemError) -> Int32? {
        while true {
            var status: Int32 = 0
            if try retryingOnInterrupt("waitpid", { waitpid(pid, &status, WNOHANG) }) == pid { return exitCode(status) }
            if giveUp() { return nil }
            sleep(milliseconds: 20)
        }
    }

    /// Ends the process group that the child `pid` leads (started with
    /// `newProcessGroup`): SIGTERM to the group, then, if the child has not
    /// exited within `grace` seconds, or others of its group are left, SIGKILL to the group.
    /// - Returns: the child's status, as `waitForExit` gives it.
    package static func endProcessGroup(_ pid: Int32, grace: Double) throws(SystemError) -> Int32 {
        _ = systemKill(-pid, SIGTERM)
        let deadline = monotonicSeconds() + grace
        var status = try waitForExit(pid) { monotonicSeconds() >= deadline }
        // While any process of the group lives, its id is not reused, so this reaches only the group.
        _ = systemKill(-pid, SIGKILL)
        if status == nil { status = try waitForExit(pid) }
        return status ?? 128 + SIGKILL
    }
}
