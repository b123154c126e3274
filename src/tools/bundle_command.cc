//===- tools/bundle_command.cc - `reactant-server bundle` -------------------===//
#include "tools/bundle_command.h"

#include "bundle/shape_variant.h"
#include "hooks/hook_factory.h"
#include "runtime/cpu_backend.h"
#include "runtime/model_repository.h"
#include "support/logging.h"
#include "tools/bundle_convert.h"
#include "tools/bundle_inspect.h"

#include <cstdlib>
#include <fmt/ranges.h>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace rs::tools {

namespace {

/// `<kind> <message>` when the message starts with the bundle directory (it names the file
/// itself), else `<kind> <dir>: <message>`.
void printLine(std::ostream &out, std::string_view kind, std::string_view dir,
               std::string_view message) {
  const bool names_path = message.starts_with(dir) && message.size() > dir.size() &&
                          (message[dir.size()] == '/' || message[dir.size()] == ':');
  out << kind << ' ';
  if (!names_path)
    out << dir << ": ";
  out << message << "\n";
}

} // namespace

int validateBundles(const std::vector<std::string> &dirs, std::ostream &out,
                    const std::string &cache_dir) {
  auto backend = runtime::createCpuBackend({});
  if (!backend.isOk()) {
    std::cerr << "error: " << backend.status().message() << "\n";
    return 1;
  }
  // A bundle with model.py starts its hooks with the default hooks.* settings, so that an
  // import error in model.py fails validation.
  runtime::ModelRepositoryOptions options;
  options.cache_dir = cache_dir;
  options.extensions = hooks::hookFactory(config::HooksConfig{}, false);
  runtime::ModelRepository repository(std::shared_ptr<runtime::Backend>(std::move(*backend)),
                                      std::move(options));
  int failures = 0;
  for (std::string dir : dirs) {
    while (dir.size() > 1 && dir.back() == '/') // "iris_mlp/" is the model iris_mlp
      dir.pop_back();
    Status s = repository.loadModel(dir);
    if (!s.isOk()) {
      printLine(out, "error", dir, s.message());
      ++failures;
      continue;
    }
    for (const auto &state : repository.states()) {
      if (state.dir != dir || !state.model)
        continue;
      const runtime::LoadedModel &m = *state.model;
      for (const std::string &warning : m.warnings)
        printLine(out, "warning", dir, warning);
      const std::string sizes = fmt::to_string(fmt::join(m.batch_sizes, ", "));
      std::string inputs;
      for (const auto &spec : m.manifest.executable_inputs)
        inputs += (inputs.empty() ? "" : ", ") + spec.name + ": " + spec.toString();
      const std::string variants =
          m.manifest.input_shapes.empty()
              ? ""
              : " shape_variants=" + bundle::variantsText(m.manifest.input_shapes) +
                    " programs=" + std::to_string(m.programs.size());
      // Programs refined from one shape-polymorphic model.mlir (bundle/polymorphic.h).
      const std::string refined = m.refined_sha256.empty() ? "" : " refined_from=model.mlir";
      out << "ok " << m.name << " batch_sizes=[" << (sizes.empty() ? "unbatched" : sizes) << "]"
          << variants << refined << " inputs=[" << inputs << "] weights=" << m.weights.size()
          << (m.extension ? " " + m.extension->describe() : std::string()) << "\n";
    }
  }
  return failures == 0 ? 0 : 1;
}

void addBundleCommand(CLI::App &app) {
  auto dirs = std::make_shared<std::vector<std::string>>();
  auto cache_dir = std::make_shared<std::string>();
  CLI::App *cmd = app.add_subcommand("bundle", "Inspect, validate and convert bundles");
  cmd->require_subcommand(1);
  CLI::App *validate =
      cmd->add_subcommand("validate", "Load, check and compile bundles as the server would");
  validate->add_option("dirs", *dirs, "Bundle directories")->required();
  validate->add_option("--cache-dir", *cache_dir,
                       "Where the executable cache entries are (the worker's cache_dir; "
                       "default INFERENCE_SERVER_CACHE_DIR, else each bundle's .cache/)");
  validate->callback([dirs, cache_dir] {
    // Every error and warning is one line of the output; the log would repeat them.
    (void)configureLogging(LogFormat::kText, "off");
    const char *env = std::getenv("INFERENCE_SERVER_CACHE_DIR");
    std::exit(
        validateBundles(*dirs, std::cout, !cache_dir->empty() ? *cache_dir : (env ? env : "")));
  });

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
