// `framewalk stack` on a program whose CFI restores more registers than the
// register file holds (64 numbered 300-363 over two frames, past the list
// kept for numbers of 64 and up): the walk stops with bad-unwind-info naming
// the register that did not fit, where it used to drop it and walk on.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "arch/registers.hpp"
#include "support/run_command.hpp"

namespace framewalk {
namespace {

#if defined(__x86_64__)

// main -> middle -> many_registers, which says `ready` and pauses. The CFI
// of many_registers saves registers 300-331 at CFA-16, that of middle
// 332-363 (32 each; a row holds 36 rules): stepping middle needs all 64 at
// once, past the file's list.
constexpr int kRowRules = 32;
static_assert(arch::RegisterFile::kMaxHighRegisters >= kRowRules &&
                  arch::RegisterFile::kMaxHighRegisters < 2 * kRowRules,
              "the second row must overflow the list, the first not");
// The first register without room: the list's size past 300.
constexpr int kFirstRefused = 300 + static_cast<int>(arch::RegisterFile::kMaxHighRegisters);

std::string many_registers_program() {
  std::string s =
      "\t.text\n\t.globl main\n\t.type main, @function\nmain:\n\t.cfi_startproc\n"
      "\tsub $8, %rsp\n\t.cfi_adjust_cfa_offset 8\n\tcall middle\n\txor %eax, %eax\n"
      "\tadd $8, %rsp\n\t.cfi_adjust_cfa_offset -8\n\tret\n\t.cfi_endproc\n\n"
      "\t.type middle, @function\nmiddle:\n\t.cfi_startproc\n"
      "\tsub $24, %rsp\n\t.cfi_adjust_cfa_offset 24\n";
  for (int reg = 300 + kRowRules; reg < 300 + 2 * kRowRules; ++reg) s += "\t.cfi_offset " + std::to_string(reg) + ", -16\n";
  s += "\tcall many_registers\n\tadd $24, %rsp\n\t.cfi_adjust_cfa_offset -24\n\tret\n\t.cfi_endproc\n\n"
       "\t.type many_registers, @function\nmany_registers:\n\t.cfi_startproc\n"
       "\tsub $24, %rsp\n\t.cfi_adjust_cfa_offset 24\n";
  for (int reg = 300; reg < 300 + kRowRules; ++reg) s += "\t.cfi_offset " + std::to_string(reg) + ", -16\n";
  s += "\tmov $1, %edi\n\tlea ready(%rip), %rsi\n\tmov $6, %edx\n\tcall write@PLT\n"
       "1:\tcall pause@PLT\n\tjmp 1b\n\t.cfi_endproc\n\n"
       "\t.section .rodata\nready:\t.ascii \"ready\\n\"\n\t.section .note.GNU-stack,\"\",@progbits\n";
  return s;
}

// Whether thread `pid` sits in pause() (system call 34).
bool in_pause(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/syscall");
  std::string number;
  return f >> number && number == "34";
}

TEST(StackCli, RegistersPastTheFilesRoomStopTheWalkNamed) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("fw_stack_registers_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "prog.S") << many_registers_program();
  int status = 0;
  const std::string built = test::run_command("cc -o " + (dir / "prog").string() + " " + (dir / "prog.S").string(),
                                              &status);
  if (status != 0) {
    fs::remove_all(dir);
    GTEST_SKIP() << "no C compiler to build the program: " << built;
  }
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  const std::string prog = (dir / "prog").string();
  const pid_t parent = getpid();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(98);
    dup2(out[1], 1);
    close(out[0]);
    execl(prog.c_str(), prog.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  pollfd p{out[0], POLLIN, 0};
  char ready[6] = {};
  const bool said_ready = poll(&p, 1, 10000) == 1 && read(out[0], ready, sizeof ready) == 6;
  for (int i = 0; i < 1000 && said_ready && !in_pause(child); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const std::string text = test::run_command(std::string(FRAMEWALK_CLI) + " stack -v -p " + std::to_string(child),
                                             &status, false);
  const std::string json = test::run_command(
      std::string(FRAMEWALK_CLI) + " stack --format=json -p " + std::to_string(child), &status, false);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  close(out[0]);
  fs::remove_all(dir);
  ASSERT_TRUE(said_ready);
  EXPECT_EQ(status, 1) << "a walk stopped early";
  // The frame of middle is the last; its row stops the walk.
  const size_t frame = text.find(" middle+");
  ASSERT_NE(frame, std::string::npos) << text;
  const size_t pc = text.rfind("0x", frame);
  ASSERT_NE(pc, std::string::npos);
  std::string digits = text.substr(pc + 2, frame - pc - 2);  // zero-padded in the frame's line
  digits.erase(0, digits.find_first_not_of('0'));
  const std::string want = "  stop: bad-unwind-info for 0x" + digits +
                           ": more registers than the register file holds (register " +
                           std::to_string(kFirstRefused) + ")\n";
  EXPECT_NE(text.find(want), std::string::npos) << text;
  EXPECT_EQ(text.find(" main+"), std::string::npos) << "no frame past the one whose row did not fit:\n" << text;
  EXPECT_NE(json.find("\"stop\":\"bad-unwind-info\""), std::string::npos) << json;
  EXPECT_NE(json.find(": more registers than the register file holds (register " + std::to_string(kFirstRefused) +
                      ")\""),
            std::string::npos)
      << json;
}

#endif

}  // namespace
}  // namespace framewalk
