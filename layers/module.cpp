#include "layers/module.h"

namespace imerge::layers {

namespace {
void checkName(const std::string& kind, const std::string& name) {
  IMERGE_CHECK(!name.empty() && name.find('.') == std::string::npos, "Module: ", kind, " name '",
               name, "' must be non-empty and contain no '.'");
}
}  // namespace

Variable Module::registerParameter(const std::string& name, Tensor value) {
  checkName("parameter", name);
  for (auto& [existing, variable] : parameters_) {
    IMERGE_CHECK(existing != name, "Module: parameter '", name, "' is registered twice");
  }
  Variable variable(std::move(value), true);
  variable.setName(name);
  parameters_.emplace_back(name, variable);
  return variable;
}

Tensor& Module::registerBuffer(const std::string& name, Tensor value) {
  checkName("buffer", name);
  buffers_.emplace_back(name, std::make_unique<Tensor>(std::move(value)));
  return *buffers_.back().second;
}

void Module::addChild(const std::string& name, std::shared_ptr<Module> child) {
  checkName("child module", name);
  IMERGE_CHECK(child != nullptr, "Module: child '", name, "' is null");
  children_.emplace_back(name, std::move(child));
}

void Module::collectParameters(const std::string& prefix,
                               std::vector<std::pair<std::string, Variable>>& out) const {
  for (const auto& [name, variable] : parameters_) out.emplace_back(prefix + name, variable);
  for (const auto& [name, child] : children_) child->collectParameters(prefix + name + ".", out);
}

void Module::collectBuffers(const std::string& prefix,
                            std::vector<std::pair<std::string, Tensor>>& out) const {
  for (const auto& [name, tensor] : buffers_) out.emplace_back(prefix + name, *tensor);
  for (const auto& [name, child] : children_) child->collectBuffers(prefix + name + ".", out);
}

std::vector<std::pair<std::string, Variable>> Module::namedParameters() const {
  std::vector<std::pair<std::string, Variable>> out;
  collectParameters("", out);
  return out;
}

std::vector<Variable> Module::parameters() const {
  std::vector<Variable> out;
  for (auto& [name, variable] : namedParameters()) out.push_back(variable);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Module::namedBuffers() const {
  std::vector<std::pair<std::string, Tensor>> out;
  collectBuffers("", out);
  return out;
}

void Module::train(bool training) {
  training_ = training;
  for (auto& [name, child] : children_) child->train(training);
}

void Module::zeroGrad() {
  for (auto& [name, variable] : parameters_) variable.zeroGrad();
  for (auto& [name, child] : children_) child->zeroGrad();
}

void Module::to(Device& device) {
  for (auto& [name, variable] : parameters_) {
    variable.zeroGrad();
    variable.tensor() = variable.tensor().to(device);
  }
  for (auto& [name, tensor] : buffers_) {
    if (tensor->dtype() == DType::Float32) *tensor = tensor->to(device);
  }
  for (auto& [name, child] : children_) child->to(device);
}

Device& Module::device() const {
  const std::vector<Variable> all = parameters();
  return all.empty() ? cpuDevice() : all.front().tensor().device();
}

int64_t Module::parameterCount() const {
  int64_t total = 0;
  for (auto& [name, variable] : namedParameters()) total += variable.numel();
  return total;
}

}  // namespace imerge::layers
