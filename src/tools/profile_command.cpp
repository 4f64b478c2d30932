#include "tools/profile_command.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <string_view>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arch/machine.hpp"
#include "elf/elf_file.hpp"
#include "tools/messages.hpp"

#ifndef FRAMEWALK_BIN_TO_LIBDIR
#define FRAMEWALK_BIN_TO_LIBDIR "../lib"
#endif
#ifndef FRAMEWALK_INSTALL_FULL_LIBDIR
#define FRAMEWALK_INSTALL_FULL_LIBDIR "/usr/local/lib"
#endif

namespace fs = std::filesystem;

namespace framewalk::tools {

namespace {

constexpr const char* kLibraryName = "libframewalk_mcount.so";
constexpr const char* kArchiveName = "libframewalk_mcount.a";

void say(const std::string& text) {
  std::fflush(stdout);
  std::fprintf(stderr, "framewalk profile: %s\n", text.c_str());
}

bool is_regular_file(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The file execvp would run for `name`: a path as it is, else the first
// executable regular file of that name in $PATH. Empty when none.
std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    const size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + name;
    if (is_regular_file(candidate) && access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) return {};
    dirs.remove_prefix(colon + 1);
  }
}

// Where this framewalk executable is.
std::string own_directory() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : self.parent_path().string();
}

// The places a file of the runtime may be: beside this executable (a build
// tree), at the library directory's place relative to it (an installation,
// moved or not), at the configured library directory.
std::vector<std::string> runtime_places(const char* name) {
  std::vector<std::string> places;
  const std::string dir = own_directory();
  if (!dir.empty()) {
    places.push_back(dir + "/" + name);
    places.push_back(dir + "/" + FRAMEWALK_BIN_TO_LIBDIR + "/" + name);
  }
  places.push_back(std::string(FRAMEWALK_INSTALL_FULL_LIBDIR) + "/" + name);
  return places;
}

std::string first_existing(const std::vector<std::string>& places) {
  for (const std::string& p : places) {
    if (is_regular_file(p)) return fs::weakly_canonical(p).string();
  }
  return {};
}

// The runtime to preload; empty (and a message printed) when none is found.
std::string find_runtime() {
  if (const char* forced = std::getenv("FRAMEWALK_MCOUNT_LIBRARY"); forced != nullptr && *forced != '\0') {
    if (is_regular_file(forced)) return fs::absolute(forced).string();
    say(std::string("FRAMEWALK_MCOUNT_LIBRARY=") + forced + ": no such file");
    return {};
  }
  const std::vector<std::string> places = runtime_places(kLibraryName);
  if (std::string found = first_existing(places); !found.empty()) return found;
  std::string where;
  for (const std::string& p : places) where += "\n  " + p;
  say(std::string("cannot find the runtime ") + kLibraryName + "; looked at:" + where +
      "\nset FRAMEWALK_MCOUNT_LIBRARY to its path");
  return {};
}

bool contains(Bytes bytes, std::string_view text) {
  const auto* begin = reinterpret_cast<const char*>(bytes.data());
  return std::string_view(begin, bytes.size()).find(text) != std::string_view::npos;
}


// What a static program adds to its link with libframewalk_mcount.a: the
// runtime's pthread_create and longjmp family in place of the C library's
// (src/mcount/wrapped_*.cpp), which a static link cannot interpose otherwise.
constexpr const char* kStaticWrapOptions =
    "-Wl,--wrap=pthread_create,--wrap=longjmp,--wrap=_longjmp,--wrap=siglongjmp,--wrap=__longjmp_chk";

enum class Plan { kPreload, kRunAsIs, kRefuse };

// How to run `program`: with the runtime preloaded (a dynamically linked ELF
// program of this machine, and anything that is not ELF, such as a script,
// whose programs get the variables), as it is (a static program with
// framewalk's runtime linked in), or not at all (messages printed).
Plan plan_for(const std::string& shown, const std::string& program) {
  auto file = elf::ElfFile::open(program);
  if (!file) return Plan::kPreload;  // not ELF (a script): its programs inherit LD_PRELOAD
  const elf::ElfFile& f = **file;
  const arch::ArchInfo& host = arch::host_machine().info();
  if (!host.matches(f.machine_key())) {
    say(shown + ": a program of " + machine_name(f.machine_key()) + "; this framewalk's " + kLibraryName +
        " is for " + machine_name(host.key));
    return Plan::kRefuse;
  }
  const bool dynamic = std::any_of(f.segments().begin(), f.segments().end(),
                                   [](const elf::Segment& s) { return s.type == elf::kPtInterp; });
  if (!dynamic) {
    // The runtime's own message text is in its .rodata, stripped or not.
    if (contains(f.image(), "framewalk mcount: ")) return Plan::kRunAsIs;
    std::string archive = first_existing(runtime_places(kArchiveName));
    if (archive.empty()) archive = kArchiveName;
    say(shown + " is statically linked: no library can be preloaded into it. Link it with framewalk's runtime "
        "in place of glibc's, e.g.\n  gcc -pg -static ... " + archive + " " + kStaticWrapOptions +
        "\n(the --wrap options let its threads be sampled from their start and its longjmps be seen)"
        "\nthen run it with framewalk profile --mcount as now (or GMON_OUT_PREFIX=DIR/gmon.out " + shown + ")");
    return Plan::kRefuse;
  }
  bool hooks = false;
  if (const elf::Section* dynstr = f.section_by_name(".dynstr")) {
    if (auto data = f.section_data(*dynstr)) {
      for (std::string_view hook : {"mcount", "_mcount", "__fentry__", "__gnu_mcount_nc", "__cyg_profile_func_enter",
                                    "__monstartup"}) {
        hooks = hooks || contains(*data, std::string(1, '\0') + std::string(hook) + std::string(1, '\0'));
      }
    }
  }
  if (!hooks) {
    say("warning: " + shown + " calls no profiling hook (built without -pg, -pg -mfentry or "
        "-finstrument-functions?): only the programs it runs that do will write a file");
  }
  return Plan::kPreload;
}

// The gmon.out.<pid> files of `dir`, each with what tells a rewritten one apart.
struct FileStamp {
  int64_t mtime_ns;
  int64_t size;
  uint64_t inode;
  bool operator==(const FileStamp&) const = default;
};

std::map<long, FileStamp> profile_files(const std::string& dir) {
  std::map<long, FileStamp> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    constexpr std::string_view kPrefix = "gmon.out.";
    if (name.size() <= kPrefix.size() || name.compare(0, kPrefix.size(), kPrefix) != 0) continue;
    const std::string digits = name.substr(kPrefix.size());
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        digits.size() > 9) {
      continue;
    }
    struct stat st;
    if (lstat(entry.path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    files[std::stol(digits)] =
        FileStamp{int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec, int64_t{st.st_size}, st.st_ino};
  }
  return files;
}

volatile sig_atomic_t g_child = 0;

// Passes a signal another process sent on to the program. One the terminal
// sent (si_code SI_KERNEL) has reached the program already: it is in our
// process group.
void forward_signal(int signo, siginfo_t* info, void*) {
  const int saved = errno;
  if (g_child > 0 && info != nullptr && info->si_code <= 0) kill(static_cast<pid_t>(g_child), signo);
  errno = saved;
}

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP};

std::string shell_word(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%") ==
                        std::string::npos) {
    return s;
  }
  std::string quoted = "'";
  for (char c : s) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

CLI::App* add_profile_command(CLI::App& app, ProfileCommandOptions& options) {
  auto* cmd = app.add_subcommand("profile", "Run a program under a profiler and say which profiles it wrote");
  cmd->add_flag("--mcount", options.mcount,
                "the program is built with gcc -pg (-pg -mfentry, -finstrument-functions): run it with framewalk's "
                "mcount runtime preloaded (libframewalk_mcount.so; FRAMEWALK_MCOUNT_LIBRARY overrides), each "
                "process writing DIR/gmon.out.<pid>");
  cmd->add_option("-o,--output", options.output_dir, "the directory for the gmon.out.<pid> files (default: .)");
  cmd->add_option("command", options.command, "-- CMD ARGS...: the program and its arguments")->required();
  cmd->footer(
      "Exit status: the program's (128+N when signal N ended it; 127: not found, 126: cannot be run; 2: usage).\n"
      "Read a file with `gprof CMD DIR/gmon.out.<pid>` or `framewalk report DIR/gmon.out.<pid> --exe CMD`.\n"
      "FRAMEWALK_MCOUNT_HZ sets the histogram's samples per CPU second (default 100); "
      "FRAMEWALK_MCOUNT_FENTRY_TIMES=1 times\n"
      "-pg -mfentry programs exactly by patching return addresses (x86-64; README).\n"
      "A static program links libframewalk_mcount.a instead, with " + std::string(kStaticWrapOptions) + "\n"
      "(its threads sampled from their start, its longjmps seen), and is run as it is.");
  return cmd;
}

int run_profile_command(const ProfileCommandOptions& options) {
  if (!options.mcount) {
    say("give --mcount (the program is built with gcc -pg): the only way of profiling so far");
    return 2;
  }
  if (options.command.empty()) {
    say("give the program to run: framewalk profile --mcount -- CMD ARGS...");
    return 2;
  }
  const std::string& shown = options.command[0];
  const std::string program = find_program(shown);
  if (program.empty()) {
    say(shown + ": command not found");
    return 127;
  }
  const Plan plan = plan_for(shown, program);
  if (plan == Plan::kRefuse) return 2;
  std::string runtime;
  if (plan == Plan::kPreload) {
    runtime = find_runtime();
    if (runtime.empty()) return 2;
  }
  std::error_code ec;
  fs::create_directories(options.output_dir, ec);
  std::string dir = fs::absolute(options.output_dir, ec).lexically_normal().string();
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (ec || !fs::is_directory(dir)) {
    say(options.output_dir + ": not a directory we can write to");
    return 2;
  }
  const std::string prefix = (fs::path(dir) / "gmon.out").string();
  if (!runtime.empty()) {
    const char* old = std::getenv("LD_PRELOAD");
    const std::string preload = old != nullptr && *old != '\0' ? runtime + ":" + old : runtime;
    setenv("LD_PRELOAD", preload.c_str(), 1);
  }
  setenv("GMON_OUT_PREFIX", prefix.c_str(), 1);
  const std::map<long, FileStamp> before = profile_files(dir);
  const time_t started = time(nullptr);

  // The signals are blocked from before the fork until the child's pid is
  // known, so that none is lost in between; the child unblocks them before
  // its exec (which resets the handler).
  sigset_t forwarded, old_mask;
  sigemptyset(&forwarded);
  for (int s : kForwarded) sigaddset(&forwarded, s);
  sigprocmask(SIG_BLOCK, &forwarded, &old_mask);
  for (int s : kForwarded) {
    struct sigaction action = {};
    action.sa_sigaction = forward_signal;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(s, &action, nullptr);
  }
  int report_pipe[2];
  if (pipe2(report_pipe, O_CLOEXEC) != 0) {
    say(std::string("pipe: ") + std::strerror(errno));
    return 2;
  }
  std::vector<char*> argv;
  for (const std::string& a : options.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t child = fork();
  if (child < 0) {
    say(std::string("fork: ") + std::strerror(errno));
    return 2;
  }
  if (child == 0) {
    close(report_pipe[0]);
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    execv(program.c_str(), argv.data());
    const int error = errno;
    ssize_t ignored = write(report_pipe[1], &error, sizeof error);
    (void)ignored;
    _exit(127);
  }
  g_child = child;
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  close(report_pipe[1]);
  int exec_error = 0;
  ssize_t got;
  do {
    got = read(report_pipe[0], &exec_error, sizeof exec_error);
  } while (got < 0 && errno == EINTR);
  close(report_pipe[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  g_child = 0;
  if (got == static_cast<ssize_t>(sizeof exec_error)) {
    say("cannot run " + program + ": " + std::strerror(exec_error));
    return exec_error == ENOENT ? 127 : 126;
  }
  int rc = 0;
  std::string ending;
  if (WIFEXITED(status)) {
    rc = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    rc = 128 + WTERMSIG(status);
    ending = std::string(shown) + " was ended by signal " + std::to_string(WTERMSIG(status)) + " (" +
             strsignal(WTERMSIG(status)) + "): a process that does not exit writes no file";
  }

  std::vector<std::pair<long, std::string>> written;
  for (const auto& [pid, stamp] : profile_files(dir)) {
    auto it = before.find(pid);
    if (it == before.end() || !(it->second == stamp)) written.emplace_back(pid, prefix + "." + std::to_string(pid));
  }
  // The program's own file first, then its descendants' by pid.
  std::stable_partition(written.begin(), written.end(), [&](const auto& w) { return w.first == child; });
  if (!ending.empty()) say(ending);
  if (written.empty()) {
    say("no profile was written to " + dir + " (no process of " + shown +
        " was built for profiling and exited normally)");
    return rc;
  }
  std::string list = std::to_string(written.size()) + (written.size() == 1 ? " file" : " files") + " written:";
  for (const auto& [pid, path] : written) {
    list += "\n  " + path + (pid == child ? "  (" + shown + ")" : "  (pid " + std::to_string(pid) + ")");
    // -finstrument-functions' exact times, written with the file (src/mcount/function_times.hpp).
    struct stat st;
    const std::string times = path + ".times";
    if (stat(times.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_mtim.tv_sec >= started) {
      list += "\n  " + times + "  (its functions' exact times)";
    }
  }
  const std::string exe = shell_word(program), file = shell_word(written.front().second);
  list += "\nread with: gprof " + exe + " " + file + "\n       or: framewalk report " + file + " --exe " + exe;
  say(list);
  return rc;
}

}  // namespace framewalk::tools
