"""Version knowledge: Ascend release names, what each torch_npu release does, documented requirements."""
