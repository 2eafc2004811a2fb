from rocanalyze.cli import run

run()
