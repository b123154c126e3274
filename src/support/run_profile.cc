//===- support/run_profile.cc - Where one backend run spends its time ------------===//
#include "support/run_profile.h"

namespace rs {

namespace {
thread_local RunProfile *current_profile = nullptr;
} // namespace

RunProfile *currentRunProfile() { return current_profile; }

RunProfileScope::RunProfileScope(RunProfile *profile) : previous_(current_profile) {
  current_profile = profile;
}

RunProfileScope::~RunProfileScope() { current_profile = previous_; }

StageClock::StageClock() : profile_(current_profile) {
  if (profile_ != nullptr)
    last_ = std::chrono::steady_clock::now();
}

void StageClock::mark(double RunProfile::*stage) {
  if (profile_ == nullptr)
    return;
  const auto now = std::chrono::steady_clock::now();
  profile_->*stage += std::chrono::duration<double>(now - last_).count();
  profile_->filled = true;
  last_ = now;
}

} // namespace rs
