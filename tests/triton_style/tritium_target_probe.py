from tritium import plugins

print(plugins.get_target(None).name)
