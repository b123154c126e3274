# lit configuration of the FileCheck tests (test/ir/*.mlir, test/passes/*.mlir; ctest runs
# each file through rs_filecheck_tests in cmake/rs_layer.cmake). Their `// RUN:` lines call
# reactant-server, FileCheck and not by name: the directories given as lit parameters come
# first on the PATH. lit writes what it keeps (.lit_test_times.txt) under the exec_root
# parameter, in the build tree, not beside the case files.
import os

import lit.formats

config.name = "reactant-server"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = lit_config.params["exec_root"]
config.environment["PATH"] = os.pathsep.join(
    [lit_config.params["reactant_server_dir"], lit_config.params["llvm_tools_dir"],
     config.environment.get("PATH", os.environ.get("PATH", ""))])
