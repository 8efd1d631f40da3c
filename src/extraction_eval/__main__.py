from extraction_eval.cli import main

main()
