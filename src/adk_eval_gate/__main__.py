from adk_eval_gate.commands.main import main

raise SystemExit(main())
