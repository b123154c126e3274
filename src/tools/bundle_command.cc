//===- tools/bundle_command.cc - `reactant-server bundle` -------------------===//
#include "tools/bundle_command.h"

#include "runtime/cpu_backend.h"
#include "runtime/model_repository.h"
#include "support/logging.h"
#include "tools/bundle_convert.h"
#include "tools/bundle_inspect.h"

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace rs::tools {
namespace {

int validateBundles(const std::vector<std::string> &dirs) {
  (void)configureLogging(LogFormat::kText, "warn");
  auto backend = runtime::createCpuBackend({});
  if (!backend.isOk()) {
    std::fprintf(stderr, "error: %s\n", backend.status().message().c_str());
    return 1;
  }
  runtime::ModelRepository repository(std::shared_ptr<runtime::Backend>(std::move(*backend)));
  int failures = 0;
  for (const std::string &dir : dirs) {
    Status s = repository.loadModel(dir);
    if (!s.isOk()) {
      std::printf("error %s: %s\n", dir.c_str(), s.message().c_str());
      ++failures;
      continue;
    }
    for (const auto &state : repository.states()) {
      if (state.dir != dir || !state.model)
        continue;
      const runtime::LoadedModel &m = *state.model;
      std::string sizes;
      for (int64_t b : m.batch_sizes)
        sizes += (sizes.empty() ? "" : ", ") + std::to_string(b);
      std::string inputs;
      for (const auto &spec : m.manifest.executable_inputs)
        inputs += (inputs.empty() ? "" : ", ") + spec.name + ": " + spec.toString();
      std::printf("ok %s batch_sizes=[%s] inputs=[%s] weights=%zu\n", m.name.c_str(),
                  sizes.empty() ? "unbatched" : sizes.c_str(), inputs.c_str(), m.weights.size());
    }
  }
  return failures == 0 ? 0 : 1;
}

} // namespace

void addBundleCommand(CLI::App &app) {
  auto dirs = std::make_shared<std::vector<std::string>>();
  CLI::App *cmd = app.add_subcommand("bundle", "Inspect, validate and convert bundles");
  cmd->require_subcommand(1);
  CLI::App *validate =
      cmd->add_subcommand("validate", "Load, check and compile bundles as the server would");
  validate->add_option("dirs", *dirs, "Bundle directories")->required();
  validate->callback([dirs] { std::exit(validateBundles(*dirs)); });

  auto paths = std::make_shared<std::vector<std::string>>();
  CLI::App *inspect = cmd->add_subcommand(
      "inspect", "Describe bundles and program files: format, size, main's signature, op counts");
  inspect->add_option("paths", *paths, "Bundle directories or program files")->required();
  inspect->callback([paths] {
    const int status = inspectBundles(*paths, std::cout);
    std::cout.flush();
    std::exit(status);
  });

  auto convert = std::make_shared<ConvertOptions>();
  auto form = std::make_shared<std::string>();
  CLI::App *conv =
      cmd->add_subcommand("convert", "Write a program (or every program of a bundle) as MLIR text");
  conv->add_option("--to", *form, "text (generic form with loc(...)) or generic")
      ->required()
      ->check(CLI::IsMember({"text", "generic"}));
  conv->add_option("input", convert->input, "A program file or a bundle directory")->required();
  conv->add_option("-o,--output", convert->output,
                   "Output file (default stdout), or a new bundle directory for a bundle");
  conv->add_flag("--force", convert->force, "Replace an existing OUTPUT");
  conv->callback([convert, form] {
    convert->to = *form == "generic" ? ConvertForm::kGeneric : ConvertForm::kText;
    const int status = convertBundle(*convert, std::cout, std::cerr);
    std::cout.flush();
    std::exit(status);
  });
}

} // namespace rs::tools
