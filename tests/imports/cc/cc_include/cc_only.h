// Found only through the -I of compile_commands.json.
constexpr int cc_only = 1;
