#include "layers/sequential.h"

namespace imerge::layers {

Sequential::Sequential(std::initializer_list<std::shared_ptr<Module>> modules) {
  for (const auto& module : modules) add(module);
}

Variable Sequential::forward(const Variable& input) {
  Variable current = input;
  for (const auto& [name, child] : children()) current = child->forward(current);
  return current;
}

std::string Sequential::describe() const {
  std::string text = "Sequential(\n";
  for (const auto& [name, child] : children()) {
    text += detail::concat("  (", name, "): ", child->describe(), "\n");
  }
  return text + ")";
}

}  // namespace imerge::layers
