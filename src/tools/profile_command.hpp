// `framewalk profile --mcount [-o DIR] -- CMD ARGS...`: runs a dynamically
// linked program built with gcc's -pg (-pg -mfentry, -finstrument-functions)
// with framewalk's mcount runtime in place of glibc's, and says which
// gmon.out files its processes wrote.
//
// The runtime (libframewalk_mcount.so) is $FRAMEWALK_MCOUNT_LIBRARY, else the
// one beside the framewalk executable (a build tree), else the one in the
// installation's library directory (found from the executable's directory,
// then the configured prefix). It goes first in LD_PRELOAD (what was there
// stays, after it), and GMON_OUT_PREFIX=DIR/gmon.out makes every process of
// the program that was set up for profiling or called a hook write
// DIR/gmon.out.<pid> when it exits normally.
//
// A statically linked program (no PT_INTERP) cannot take a preloaded
// library: it is run only when framewalk's runtime is linked into it
// (libframewalk_mcount.a; recognised by the runtime's message text), else
// refused with the link line to use.
//
// SIGINT, SIGTERM and SIGHUP sent to framewalk by another process (kill) are
// passed on to the program; those the terminal sends reach the program
// directly, as it is in the same process group, and are not sent twice.
// Exit status: the program's; 128+N when it died of signal N; 126/127 when
// it could not be run; 2 for usage errors and programs that cannot be
// profiled this way.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace framewalk::tools {

struct ProfileCommandOptions {
  bool mcount = false;
  std::string output_dir = ".";
  std::vector<std::string> command;
};

// Adds the `profile` subcommand to `app`, parsed into `options`.
CLI::App* add_profile_command(CLI::App& app, ProfileCommandOptions& options);

int run_profile_command(const ProfileCommandOptions& options);

}  // namespace framewalk::tools
