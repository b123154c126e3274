//===- test/e2e_repro/precedence_test.cc - default < profile < file < env --===//
//
// Issue 5 acceptance: for every key the regulated profile sets (runtime.batch_sizes,
// scheduler.coalescing, runtime.xla_flags.xla_gpu_exclude_nondeterministic_ops), the
// resolved value follows default < profile < file < environment, whichever of the file
// or the environment turns the profile on; the profile never sets runtime.numerics. The
// worker then loads what the resolved setting says.
//
//===----------------------------------------------------------------------===//
#include "repro_util.h"

namespace rs::repro {
namespace {

constexpr std::string_view kFlag = "xla_gpu_exclude_nondeterministic_ops";

/// One profile key: how the file and the environment set it, and how to read it back.
struct Key {
  std::string name;
  std::string file_yaml; // the value in the file, inside runtime/scheduler blocks below
  std::string env_var;
  std::string env_value;
  std::function<std::string(const config::WorkerConfig &)> read;
  std::string default_value, profile_value, file_value, env_result;
};

std::vector<Key> profileKeys() {
  return {
      {"runtime.batch_sizes", "runtime: {batch_sizes: all}", "INFERENCE_SERVER_RUNTIME_BATCH_SIZES",
       "largest",
       [](const config::WorkerConfig &c) {
         return std::string(config::batchSizesName(c.runtime.batch_sizes));
       },
       "all", "largest", "all", "largest"},
      {"scheduler.coalescing", "scheduler: {coalescing: true}",
       "INFERENCE_SERVER_SCHEDULER_COALESCING", "false",
       [](const config::WorkerConfig &c) {
         return std::string(c.scheduler.coalescing ? "true" : "false");
       },
       "true", "false", "true", "false"},
      {"runtime.xla_flags." + std::string(kFlag),
       "runtime: {xla_flags: {" + std::string(kFlag) + ": false}}",
       "INFERENCE_SERVER_RUNTIME_XLA_FLAGS", "--" + std::string(kFlag) + "=0",
       [](const config::WorkerConfig &c) {
         auto it = c.runtime.xla_flags.find(std::string(kFlag));
         return it == c.runtime.xla_flags.end() ? std::string("unset") : it->second;
       },
       "unset", "true", "false", "0"},
  };
}

/// The `global:` block: the profile (when `profile_in_file`) and the key's file value
/// (when `key_in_file`), merged into one runtime block where both are runtime keys.
std::string globalYaml(const Key &k, bool profile_in_file, bool key_in_file) {
  std::string runtime = "numerics: f32";
  if (profile_in_file)
    runtime += ", profile: regulated";
  std::string out;
  if (key_in_file && k.file_yaml.rfind("runtime: {", 0) == 0) {
    runtime += ", " + k.file_yaml.substr(10, k.file_yaml.size() - 11);
  } else if (key_in_file) {
    out += "  " + k.file_yaml + "\n";
  }
  return "  runtime: {" + runtime + "}\n" + out;
}

TEST(Precedence, DefaultProfileFileEnvironmentForEveryProfileKey) {
  TempRepo repo({});
  for (const Key &k : profileKeys()) {
    SCOPED_TRACE(k.name);
    for (bool profile_from_env : {false, true}) {
      SCOPED_TRACE(profile_from_env ? "profile from the environment" : "profile from the file");
      config::Environment profile_env;
      if (profile_from_env)
        profile_env["INFERENCE_SERVER_RUNTIME_PROFILE"] = "regulated";

      // default: no profile, nothing set.
      auto d = workerConfig(repo.repo(), globalYaml(k, false, false));
      ASSERT_TRUE(d.isOk()) << d.status().toString();
      EXPECT_EQ(k.read(*d), k.default_value);
      EXPECT_TRUE(d->profile_keys.empty());

      // profile over default.
      auto p = workerConfig(repo.repo(), globalYaml(k, !profile_from_env, false), profile_env);
      ASSERT_TRUE(p.isOk()) << p.status().toString();
      EXPECT_EQ(p->runtime.profile, config::Profile::kRegulated);
      EXPECT_EQ(k.read(*p), k.profile_value);
      EXPECT_NE(std::find(p->profile_keys.begin(), p->profile_keys.end(), k.name),
                p->profile_keys.end());
      EXPECT_EQ(p->runtime.numerics, config::Numerics::kF32); // from the file, never the profile

      // file over profile.
      auto f = workerConfig(repo.repo(), globalYaml(k, !profile_from_env, true), profile_env);
      ASSERT_TRUE(f.isOk()) << f.status().toString();
      EXPECT_EQ(k.read(*f), k.file_value);
      EXPECT_EQ(std::find(f->profile_keys.begin(), f->profile_keys.end(), k.name),
                f->profile_keys.end());

      // environment over file.
      config::Environment env = profile_env;
      env[k.env_var] = k.env_value;
      auto e = workerConfig(repo.repo(), globalYaml(k, !profile_from_env, true), env);
      ASSERT_TRUE(e.isOk()) << e.status().toString();
      EXPECT_EQ(k.read(*e), k.env_result);
      EXPECT_TRUE(e->env_keys.count(
          k.name.rfind("runtime.xla_flags", 0) == 0 ? std::string("runtime.xla_flags") : k.name));
    }
  }
}

TEST(Precedence, TheProfileNeverSetsNumerics) {
  TempRepo repo({});
  auto w = workerConfig(repo.repo(), "  runtime: {profile: regulated}\n");
  ASSERT_TRUE(w.isOk()) << w.status().toString();
  EXPECT_EQ(w->runtime.numerics, config::Numerics::kAuto); // the default
  EXPECT_EQ(w->profile_keys,
            (std::vector<std::string>{"runtime.batch_sizes", "scheduler.coalescing",
                                      "runtime.xla_flags." + std::string(kFlag)}));
}

TEST(Precedence, TheWorkerLoadsWhatTheResolvedSettingSays) {
  TempRepo repo({"iris_mlp"});
  // The profile asks for largest; the file says all: every size is loaded.
  auto file_wins = workerConfig(repo.repo(), "  runtime: {profile: regulated, batch_sizes: all}\n");
  ASSERT_TRUE(file_wins.isOk());
  auto w = startWorker(*file_wins);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->repository().state("iris_mlp")->model->batch_sizes,
            (std::vector<int64_t>{1, 8, 32}));
  w.reset();
  // The environment turns it back to largest: only the batch-32 program.
  auto env_wins = workerConfig(repo.repo(), "  runtime: {profile: regulated, batch_sizes: all}\n",
                               {{"INFERENCE_SERVER_RUNTIME_BATCH_SIZES", "largest"}});
  ASSERT_TRUE(env_wins.isOk());
  w = startWorker(*env_wins);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->repository().state("iris_mlp")->model->batch_sizes, (std::vector<int64_t>{32}));
}

} // namespace
} // namespace rs::repro
