// Reading a live test process's state from /proc, and waiting for it to change.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

namespace framewalk::test {

// A field of /proc/PID/task/TID/status ("TracerPid", "State"...), with the
// tab after the colon: "\t0".
inline std::string task_status_field(pid_t pid, pid_t tid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return line.substr(field.size() + 1);
  return "";
}

// Polls `done` every millisecond; false if it did not come true in time.
inline bool wait_until(const std::function<bool()>& done, std::chrono::seconds limit = std::chrono::seconds(5)) {
  const auto give_up = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace framewalk::test
