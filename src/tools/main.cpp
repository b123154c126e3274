//===- tools/main.cpp - reactant-server entry point ------------------------===//
#include <cstdio>
int main() {
  std::puts("reactant-server: not yet wired");
  return 1;
}
